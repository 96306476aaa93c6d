"""Archive limits: zip bombs are refused from the central directory, before any unpacking."""

from __future__ import annotations

import subprocess
import sys
import time
import zipfile

import pytest

from fmu_surrogate.fmu.model.archive import ArchiveLimitError, check_archive
from fmu_surrogate.fmu.model.loading import open_fmu

GiB = 1024**3


def bomb(path, method, declared):
    """A small archive whose one binary member *declares* ``declared`` unpacked bytes.

    Real bombs of this size take seconds to compress; the refusal reads only the central
    directory, so a member that declares the size is the same case for the check (and an
    extraction would stop at the declared size and fail its CRC)."""
    with zipfile.ZipFile(path, "w", method) as z:
        z.writestr("modelDescription.xml",
                   '<?xml version="1.0"?><fmiModelDescription fmiVersion="2.0" modelName="b" '
                   'guid="{b}"><CoSimulation modelIdentifier="b"/><ModelVariables/>'
                   '<ModelStructure/></fmiModelDescription>')
        z.writestr("binaries/linux64/b.so", b"\0" * 4096)
        z.filelist[-1].file_size = declared  # what the central directory will say
    return path


@pytest.mark.parametrize("method, declared, match", [
    (zipfile.ZIP_BZIP2, 3 * GiB, "compressed with bzip2.*only use store or deflate"),
    (zipfile.ZIP_DEFLATED, 4 * GiB, ("unpacks to 4.0 GiB, above the limit of 2.0 GiB.*"
                                    "FMU_SURROGATE_MAX_UNPACKED=")),
])
def test_bombs_are_refused_at_once_by_info(tmp_path, method, declared, match):
    p = bomb(tmp_path / "bomb.fmu", method, declared)
    t0 = time.perf_counter()
    with pytest.raises(ArchiveLimitError, match=match):
        open_fmu(p)
    assert time.perf_counter() - t0 < 1.0  # central directory only (measured ~1 ms)


def test_bomb_is_refused_by_the_harvest_command_with_one_line(tmp_path):
    p = bomb(tmp_path / "bomb.fmu", zipfile.ZIP_DEFLATED, 4 * GiB)
    r = subprocess.run([sys.executable, "-m", "fmu_surrogate.cli", "harvest", str(p), "-o",
                        str(tmp_path / "b.nc")], capture_output=True, text=True, timeout=60, check=False)
    assert r.returncode == 2
    assert "unpacks to 4.0 GiB" in r.stderr and "Traceback" not in r.stderr
    assert not (tmp_path / "b.nc.parts").exists()


def test_limits_are_raised_through_the_environment(tmp_path, monkeypatch):
    p = bomb(tmp_path / "bomb.fmu", zipfile.ZIP_DEFLATED, 4 * GiB)
    monkeypatch.setenv("FMU_SURROGATE_MAX_UNPACKED", "5GiB")
    with zipfile.ZipFile(p) as z:
        assert len(check_archive(z, p)) == 2
    monkeypatch.setenv("FMU_SURROGATE_MAX_MEMBERS", "1")
    with zipfile.ZipFile(p) as z, pytest.raises(ArchiveLimitError, match="2 members.*limit of 1"):
        check_archive(z, p)
    monkeypatch.setenv("FMU_SURROGATE_MAX_UNPACKED", "lots")
    with zipfile.ZipFile(p) as z, pytest.raises(ArchiveLimitError, match="is not a size"):
        check_archive(z, p)
