// ptxlab stub of cutlass/util/command_line.h (host only): options come from ptxlab_host's arguments.
#pragma once
namespace cutlass {
struct CommandLine {
  CommandLine(int, char const**) {}
  bool check_cmd_line_flag(char const*) const { return false; }
  template <class T> void get_cmd_line_argument(char const*, T&) const {}
  template <class T, class U> void get_cmd_line_argument(char const*, T&, U const&) const {}
};
}  // namespace cutlass
