// ptxlab stub of cutlass/util/command_line.h (tools/util, host only) for ptxlab.cutlass builds: the example's
// Options::parse runs on the emulator over the argv ptxlab_host passes ("--name=value" and "--flag" strings, as on
// a shell command line); numbers are parsed as decimal integers or decimals with an optional exponent. Wrappers
// that set Options fields directly pass no arguments (argc 0: every value keeps its default).
#pragma once
#include <string>
namespace cutlass {
struct CommandLine {
  int ptxlab_argc;
  char const** ptxlab_argv;
  CommandLine(int argc, char const** argv) : ptxlab_argc(argc), ptxlab_argv(argv) {}
  // the text after "--name=" ("" for "--name"), or nullptr when the argument is absent
  char const* ptxlab_find(char const* name) const {
    for (int i = 0; i < ptxlab_argc; ++i) {
      char const* a = ptxlab_argv[i];
      if (a[0] != '-' || a[1] != '-') continue;
      a += 2;
      int j = 0;
      while (name[j] && a[j] == name[j]) ++j;
      if (name[j] == 0 && (a[j] == 0 || a[j] == '=')) return a[j] ? a + j + 1 : a + j;
    }
    return nullptr;
  }
  static double ptxlab_number(char const* s) {
    double sign = 1, v = 0, scale = 1;
    if (*s == '-' || *s == '+') sign = (*s++ == '-') ? -1 : 1;
    while (*s >= '0' && *s <= '9') v = v * 10 + (*s++ - '0');
    if (*s == '.') for (++s; *s >= '0' && *s <= '9'; ++s) { scale /= 10; v += (*s - '0') * scale; }
    if (*s == 'e' || *s == 'E') {
      ++s;
      int esign = 1, e = 0;
      if (*s == '-' || *s == '+') esign = (*s++ == '-') ? -1 : 1;
      while (*s >= '0' && *s <= '9') e = e * 10 + (*s++ - '0');
      for (; e > 0; --e) v = esign > 0 ? v * 10 : v / 10;
    }
    return sign * v;
  }
  static void ptxlab_parse(char const* s, char& v) { v = s[0]; }
  static void ptxlab_parse(char const* s, std::string& v) { v = std::string(s); }
  static void ptxlab_parse(char const* s, bool& v) { v = !(s[0] == '0' || s[0] == 'f' || s[0] == 'F'); }
  template <class T> static void ptxlab_parse(char const* s, T& v) { v = T(ptxlab_number(s)); }
  bool check_cmd_line_flag(char const* name) const { return ptxlab_find(name) != nullptr; }
  template <class T> void get_cmd_line_argument(char const* name, T& val) const {
    char const* s = ptxlab_find(name);
    if (s != nullptr && s[0] != 0) ptxlab_parse(s, val);
  }
  template <class T, class U> void get_cmd_line_argument(char const* name, T& val, U const& dflt) const {
    val = T(dflt);
    get_cmd_line_argument(name, val);
  }
  void get_cmd_line_argument(char const* name, bool& val, bool dflt) const {
    char const* s = ptxlab_find(name);
    val = s == nullptr ? dflt : (s[0] == 0 ? true : !(s[0] == '0' || s[0] == 'f' || s[0] == 'F'));
  }
};
}  // namespace cutlass
