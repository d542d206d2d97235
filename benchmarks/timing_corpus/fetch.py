"""Fetch the corpus's public sources (pinned commits, sources.SOURCES) into a cache outside the repo; pack them for
the device machine.

    python benchmarks/timing_corpus/fetch.py [--cache DIR] [--mirror DIR]       # fill the cache (re-runnable)
    python benchmarks/timing_corpus/fetch.py --pack [DIR]                         # + copy into the repo for `carry`

Where a file comes from, first that works: the cache itself (already there, digest checked); ``--mirror DIR`` (or
$PTXLAB_CORPUS_MIRROR), a folder of git repositories named ``<owner>+<name>/repo``, ``<owner>+<name>`` or
``<owner>/<name>`` (bare or not) that contain the pinned commit; otherwise ``git fetch --depth 1`` of the commit from
https://github.com/<owner>/<name>.  Every file is checked against its sha256 digest before it is stored.
``--pack`` copies the cached tree into ``.timing_corpus_sources/`` in the repo root (or DIR), adds the prebuilt
modules of every kernel (bundle.py: PTX + cubin from this machine's NVRTC, the ones the predictions use) and adds
that path to the repository's ``info/exclude`` so git ignores it; name it in `run`'s ``carry``
(ptx_docs/timing_validation.md).
"""
from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from timing_corpus.sources import DEFAULT_CACHE, PACK_DIR, ROOT, SOURCES, Source, cached_path, digest  # noqa: E402


def _git(*args: str, cwd: Path | None = None) -> bytes:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True).stdout


def _mirror_gitdir(mirror: Path, src: Source) -> Path | None:
    owner, name = src.repo.split("/")
    for cand in (mirror / src.slug / "repo", mirror / src.slug, mirror / owner / name):
        if cand.is_dir():
            return cand
    return None


def _from_mirror(mirror: Path, src: Source, path: str) -> bytes | None:
    gd = _mirror_gitdir(mirror, src)
    if gd is None:
        return None
    try:
        return _git("--git-dir", str(gd / ".git") if (gd / ".git").is_dir() else str(gd), "show",
                    f"{src.commit}:{path}")
    except subprocess.CalledProcessError:
        return None


def _from_github(src: Source, paths: list[str], tmp: Path) -> dict:
    """Shallow-fetch the pinned commit once and read the files from it."""
    repo = tmp / src.slug
    repo.mkdir()
    _git("init", "-q", cwd=repo)
    _git("fetch", "-q", "--depth", "1", f"https://github.com/{src.repo}.git", src.commit, cwd=repo)
    return {p: _git("show", f"{src.commit}:{p}", cwd=repo) for p in paths}


def fetch(cache: Path, mirror: Path | None, verbose: bool = True, keys=None) -> int:
    """Fill ``cache`` (with the sources named in ``keys`` only, if given); returns the number of files newly stored."""
    stored = 0
    for src in SOURCES.values():
        if keys is not None and src.key not in keys:
            continue
        missing = []
        for path, want in src.files.items():
            dest = cached_path(cache, src, path)
            if dest.is_file() and digest(dest.read_bytes()) == want:
                continue
            data = _from_mirror(mirror, src, path) if mirror else None
            if data is None:
                missing.append(path)
                continue
            stored += _store(dest, data, want, src, path)
        if missing:
            with tempfile.TemporaryDirectory() as tmp:
                got = _from_github(src, missing, Path(tmp))
            for path in missing:
                stored += _store(cached_path(cache, src, path), got[path], src.files[path], src, path)
        if verbose:
            print(f"{src.repo}@{src.commit[:12]}: {len(src.files)} files ({src.license})")
    return stored


def _store(dest: Path, data: bytes, want: str, src: Source, path: str) -> int:
    if digest(data) != want:
        raise SystemExit(f"error: {src.repo}@{src.commit[:12]}:{path} has sha256 {digest(data)}, pinned {want}; "
                         "the source changed or the mirror is wrong (update sources.SOURCES only after checking it)")
    dest.parent.mkdir(parents=True, exist_ok=True)
    dest.write_bytes(data)
    return 1


def pack(cache: Path, dest: Path) -> int:
    """Copy the cached files into ``dest`` and make git ignore it (info/exclude of the repository)."""
    n = 0
    for src in SOURCES.values():
        for path in src.files:
            a, b = cached_path(cache, src, path), cached_path(dest, src, path)
            b.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(a, b)
            n += 1
    try:
        rel = dest.resolve().relative_to(ROOT)
    except ValueError:
        return n                                  # outside the repo: nothing to ignore
    common = Path(_git("rev-parse", "--git-common-dir", cwd=ROOT).decode().strip())
    excl = (common if common.is_absolute() else ROOT / common) / "info" / "exclude"
    line = f"/{rel.as_posix()}/"
    text = excl.read_text() if excl.is_file() else ""
    if line not in text.splitlines():
        excl.parent.mkdir(parents=True, exist_ok=True)
        excl.write_text(text + ("" if text.endswith("\n") or not text else "\n") + line + "\n")
    return n


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cache", default=str(DEFAULT_CACHE), help="cache folder (default %(default)s)")
    ap.add_argument("--mirror", default=os.environ.get("PTXLAB_CORPUS_MIRROR"),
                    help="folder of local git mirrors (<owner>+<name>/repo); default $PTXLAB_CORPUS_MIRROR")
    ap.add_argument("--pack", nargs="?", const=str(PACK_DIR), default=None,
                    help="also copy the sources into this folder (default: .timing_corpus_sources in the repo) "
                         "with the prebuilt modules of every kernel (bundle.py)")
    ap.add_argument("--no-build", action="store_true", help="with --pack: sources only, no prebuilt modules")
    args = ap.parse_args(argv)
    cache = Path(args.cache).expanduser()
    n = fetch(cache, Path(args.mirror).expanduser() if args.mirror else None)
    total = sum(len(s.files) for s in SOURCES.values())
    print(f"cache {cache}: {total} files ({n} newly fetched)")
    if args.pack:
        dest = Path(args.pack).expanduser()
        print(f"packed {pack(cache, dest)} files into {dest} (carry it to the device machine)")
        if not args.no_build:
            from timing_corpus import bundle, manifest
            p = bundle.prebuild(manifest.KERNELS, dest, dest)
            print(f"prebuilt {len(manifest.KERNELS)} modules: {p} ({p.stat().st_size // 1024} KiB)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
