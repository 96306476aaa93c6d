"""Compile C sources and a modelDescription.xml into an FMU archive.

Uses the system C compiler (``$CC``, else ``cc``) and the FMI headers that fmpy ships in
``fmpy/c-code``.  Builds are cached: the archive records a hash of everything that went into it
(sources, model description, flags, compiler version) and is rebuilt only when that changes.
This module is shared by the benchmark FMUs, the test fixtures and the FMU exporter.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import tempfile
import zipfile
from collections.abc import Mapping, Sequence
from pathlib import Path

from fmu_surrogate.errors import FmuSurrogateError

_BUILD_INFO = "documentation/fmu-surrogate-build.json"


class FMUBuildError(FmuSurrogateError, RuntimeError):
    """Compiling an FMU failed; the message carries the compiler output."""


def fmi_include_dir() -> Path:
    """Directory of the FMI 2.0/3.0 headers shipped with fmpy."""
    import fmpy

    return Path(fmpy.__file__).parent / "c-code"


def _compiler() -> str:
    env = os.environ.get("CC")
    if env:
        cc = shutil.which(env)
        if not cc:
            raise FMUBuildError(
                f"$CC is set to {env!r}, which is not an executable on PATH; "
                "point $CC at your C compiler or unset it to use cc/gcc."
            )
        return cc
    cc = shutil.which("cc") or shutil.which("gcc")
    if not cc:
        raise FMUBuildError(
            "no C compiler found: install gcc (Debian: apt install gcc) or set $CC to your compiler."
        )
    return cc


def _compiler_version(cc: str) -> str:
    try:
        return subprocess.run([cc, "--version"], capture_output=True, text=True, check=False).stdout.splitlines()[0]
    except (OSError, IndexError):
        return cc


def _binary_dir(fmi_version: str) -> str:
    import fmpy

    return fmpy.platform if fmi_version.startswith("2") else fmpy.platform_tuple


def _shared_suffix() -> str:
    import fmpy

    return {"windows": ".dll", "darwin": ".dylib"}.get(fmpy.system, ".so")


def build_hash(
    sources: Sequence[Path], model_description: str, cflags: Sequence[str], cc: str
) -> str:
    """Hash of all build inputs (source contents, model description, flags, compiler)."""
    h = hashlib.sha256()
    for s in sources:
        h.update(Path(s).name.encode())
        h.update(Path(s).read_bytes())
    h.update(model_description.encode())
    h.update(" ".join(cflags).encode())
    h.update(_compiler_version(cc).encode())
    return h.hexdigest()


def cached_hash(fmu: Path) -> str | None:
    """The build hash recorded in an FMU built by :func:`build_fmu`, or ``None``."""
    try:
        with zipfile.ZipFile(fmu) as z:
            return json.loads(z.read(_BUILD_INFO))["hash"]
    except (OSError, KeyError, zipfile.BadZipFile, ValueError):
        return None


def build_fmu(
    sources: Sequence[str | Path],
    model_description: str,
    output: str | Path,
    model_identifier: str,
    *,
    headers: Sequence[str | Path] = (),
    cflags: Sequence[str] = (),
    fmi_version: str = "2.0",
    force: bool = False,
    libraries: Mapping[str, str | Path] | None = None,
) -> Path:
    """Compile ``sources`` into the FMU ``output`` (cached on the build inputs).

    Parameters
    ----------
    sources : sequence of path
        C files compiled into the shared library (and shipped under ``sources/``).
    model_description : str
        Text of ``modelDescription.xml``.
    output : path
        Where to write the ``.fmu`` archive; parent directories are created.
    model_identifier : str
        Name of the shared library, as in the model description.
    headers : sequence of path
        Extra header files, shipped under ``sources/`` and on the include path.
    cflags : sequence of str
        Extra compiler flags (e.g. ``-DMODEL_FAULT=1``).
    fmi_version : {"2.0", "3.0"}
    force : bool
        Rebuild even if the cached archive is up to date.
    libraries : mapping, optional
        Shared libraries the FMU binary links with, ``file name -> path``: each is shipped next
        to the binary under that name (its SONAME, the name the dynamic loader looks for) and
        the binary finds them there by its run path ``$ORIGIN``, so the FMU needs nothing
        outside its folder.  Linux (ELF) only.

    Returns
    -------
    Path
        The path of the FMU.
    """
    output = Path(output)
    srcs = [Path(s) for s in sources]
    hdrs = [Path(h) for h in headers]
    libs = {name: Path(p) for name, p in (libraries or {}).items()}
    for p in srcs + hdrs + list(libs.values()):
        if not p.is_file():
            raise FMUBuildError(f"source file {p} does not exist; check the path.")
    cc = _compiler()
    link = [f"{name}={p.name}" for name, p in libs.items()]
    digest = build_hash(srcs + hdrs + list(libs.values()), model_description,
                        list(cflags) + link, cc)
    if not force and output.is_file() and cached_hash(output) == digest:
        return output

    with tempfile.TemporaryDirectory(prefix="fmu-build-") as tmp:
        root = Path(tmp) / "fmu"
        (root / "sources").mkdir(parents=True)
        bindir = root / "binaries" / _binary_dir(fmi_version)
        bindir.mkdir(parents=True)
        (root / "documentation").mkdir()
        (root / "modelDescription.xml").write_text(model_description, encoding="utf-8")
        for p in srcs + hdrs:
            shutil.copy(p, root / "sources" / p.name)
        lib = bindir / (model_identifier + _shared_suffix())
        include_dirs = {fmi_include_dir(), *(p.parent for p in srcs + hdrs)}
        # only the FMI functions are exported (FMI2_Export/FMI3_Export mark them visible): a
        # model's own global functions must not be interposed by those of another FMU that a
        # host loaded before with RTLD_GLOBAL (same names, other data: a crash)
        cmd = [cc, "-shared", "-fPIC", "-O2", "-std=c99", "-fvisibility=hidden"]
        cmd += [f"-I{d}" for d in sorted(include_dirs)]
        cmd += list(cflags) + [str(s) for s in srcs] + ["-o", str(lib), "-lm"]
        for name, p in libs.items():
            shutil.copyfile(p, bindir / name)
            cmd.append(str(bindir / name))
        if libs:
            # DT_RPATH (not RUNPATH): searched before LD_LIBRARY_PATH, so the FMU takes the
            # copies next to its binary; rpath-link lets the linker resolve their own needs
            cmd += ["-Wl,--disable-new-dtags", "-Wl,-rpath,$ORIGIN", f"-Wl,-rpath-link,{bindir}"]
        proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
        if proc.returncode != 0:
            raise FMUBuildError(
                f"compiling {model_identifier} failed (exit {proc.returncode}):\n"
                f"{' '.join(cmd)}\n{proc.stderr.strip()}"
            )
        (root / _BUILD_INFO).write_text(json.dumps({"hash": digest, "command": cmd}, indent=1))
        output.parent.mkdir(parents=True, exist_ok=True)
        part = output.with_suffix(output.suffix + ".part")
        with zipfile.ZipFile(part, "w", zipfile.ZIP_DEFLATED) as z:
            for f in sorted(root.rglob("*")):
                if f.is_file():
                    z.write(f, f.relative_to(root).as_posix())
        os.replace(part, output)  # atomic: a concurrent reader never sees half an archive
    return output


def build_shared_library(
    sources: Sequence[str | Path], output: str | Path, *, cflags: Sequence[str] = ()
) -> Path:
    """Compile ``sources`` into the shared library ``output``, unless it is already there.

    The caller names ``output`` after a hash of what goes into it (see :func:`build_hash`), so an
    existing file is up to date.  The library is written next to ``output`` and renamed into
    place, so that processes building it at the same time never load half a file.

    Parameters
    ----------
    sources : sequence of path
        C files (FMI headers of fmpy on the include path).
    output : path
        The library to write; parent directories are created.
    cflags : sequence of str
        Extra compiler flags.

    Returns
    -------
    Path
        ``output``.

    Raises
    ------
    FMUBuildError
        No compiler, or the compilation failed (the message has the compiler's output).
    """
    output = Path(output)
    if output.is_file():
        return output
    cc = _compiler()
    output.parent.mkdir(parents=True, exist_ok=True)
    part = output.with_name(f"{output.name}.{os.getpid()}.part")
    cmd = [cc, "-shared", "-fPIC", "-O2", "-std=c99", f"-I{fmi_include_dir()}", *cflags,
           *[str(s) for s in sources], "-o", str(part), "-lm"]
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        part.unlink(missing_ok=True)
        raise FMUBuildError(
            f"compiling {output.name} failed (exit {proc.returncode}):\n"
            f"{' '.join(cmd)}\n{proc.stderr.strip()}"
        )
    os.replace(part, output)
    return output



def compiler_path() -> str:
    """The C compiler that :func:`build_fmu` and :func:`build_shared_library` use.

    Raises
    ------
    FMUBuildError
        ``$CC`` names no executable, or no ``cc``/``gcc`` is on ``PATH``.
    """
    return _compiler()
