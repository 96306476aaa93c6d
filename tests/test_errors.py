"""One error family: every error the package raises on purpose is a ``FmuSurrogateError`` and
still the builtin it always was, so ``except fs.FmuSurrogateError`` and ``except ValueError``
both keep working.

The scan below reads the package's source (no import): a ``raise`` of a bare builtin exception
is a finding unless the builtin, or its place, is on the allow-lists, each entry with its reason.
"""

from __future__ import annotations

import ast
import builtins
import contextlib
import importlib
import inspect
import pkgutil
from fnmatch import fnmatch
from pathlib import Path

import numpy as np
import pytest

import fmu_surrogate as fs
from fmu_surrogate import errors

ROOT = Path(__file__).resolve().parents[1]

#: builtins that stay builtins wherever they are raised: builtin -> reason
ALLOWED_KINDS: dict[str, str] = {
    "NotImplementedError": "abstract methods that a subclass overrides; never a user's mistake",
    "AssertionError": "internal invariants (a bug, not a user error) and the assertion contract "
                      "of the pytest helpers in fmu_surrogate.testing",
    "SystemExit": "leaving the process on SIGTERM",
    "KeyboardInterrupt": "interrupting the process",
    "StopIteration": "iterator protocol",
    "StopAsyncIteration": "iterator protocol",
    "GeneratorExit": "generator protocol",
}

#: (file glob relative to the repository, function qualname glob, builtin) -> reason
ALLOWED: dict[tuple[str, str, str], str] = {
    ("fmu_surrogate/lazy.py", "*__getattr__", "AttributeError"):
        "a module __getattr__ must raise AttributeError for unknown names (import protocol)",
    ("fmu_surrogate/identify/linear/model/recurrence.py", "_Dgemm.__init__", "RuntimeError"):
        "probe of SciPy's BLAS ABI; _load_dgemm catches it and falls back to numpy",
}

#: exception classes of the package that are not errors a user sees: "module.qualname" -> reason
ALLOWED_CLASSES: dict[str, str] = {
    "fmu_surrogate.fmu.runner.tempdirs._Terminated":
        "BaseException that unwinds a harvest on SIGTERM; becomes SystemExit before it leaves",
    "fmu_surrogate.fmu.runner.tempdirs.Terminated":
        "the SystemExit (status 143) a harvest ends with on SIGTERM, after its cleanup: not an "
        "error of the tool, the CLI reports it in one line as it reports Ctrl-C",
}


def _builtin_exception(name: str) -> type[BaseException] | None:
    obj = getattr(builtins, name, None)
    return obj if isinstance(obj, type) and issubclass(obj, BaseException) else None


def _caught_names(handler: ast.ExceptHandler) -> set[str]:
    t = handler.type
    if t is None:
        return {"BaseException"}
    elts = t.elts if isinstance(t, ast.Tuple) else [t]
    return {e.id if isinstance(e, ast.Name) else getattr(e, "attr", "") for e in elts}


def _reraises(handler: ast.ExceptHandler) -> bool:
    return any(isinstance(n, ast.Raise) and n.exc is None for n in ast.walk(handler))


def bare_raises(root: Path = ROOT) -> list[tuple[str, int, int, str, str]]:
    """Every ``raise`` of a builtin exception under ``root/fmu_surrogate`` that can leave its
    function: ``(path, line, column of the builtin's name, function qualname, builtin)``.

    A raise inside a ``try`` of the same function whose handler catches it (and does not
    re-raise) is control flow and is not reported.
    """
    found: list[tuple[str, int, int, str, str]] = []

    def visit(node: ast.AST, path: str, qual: list[str], caught: frozenset[type]) -> None:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            inner = frozenset() if not isinstance(node, ast.ClassDef) else caught
            for child in ast.iter_child_nodes(node):
                visit(child, path, [*qual, node.name], inner)
            return
        if isinstance(node, ast.Try) or type(node).__name__ == "TryStar":
            here = {c for h in node.handlers if not _reraises(h)
                    for c in map(_builtin_exception, _caught_names(h)) if c is not None}
            for stmt in node.body:
                visit(stmt, path, qual, caught | here)
            for part in (*node.handlers, *node.orelse, *node.finalbody):
                visit(part, path, qual, caught)
            return
        if isinstance(node, ast.Raise) and node.exc is not None:
            target = node.exc.func if isinstance(node.exc, ast.Call) else node.exc
            if isinstance(target, ast.Name):
                cls = _builtin_exception(target.id)
                if cls is not None and not any(issubclass(cls, c) for c in caught):
                    found.append((path, node.lineno, target.col_offset, ".".join(qual),
                                  target.id))
        for child in ast.iter_child_nodes(node):
            visit(child, path, qual, caught)

    for file in sorted((root / "fmu_surrogate").rglob("*.py")):
        rel = file.relative_to(root).as_posix()
        visit(ast.parse(file.read_text(encoding="utf-8")), rel, [], frozenset())
    return found


def is_allowed(path: str, qualname: str, name: str) -> bool:
    """Whether a bare ``raise name`` at ``path`` in function ``qualname`` is on an allow-list."""
    return name in ALLOWED_KINDS or any(
        fnmatch(path, p) and fnmatch(qualname, q) and name == n for p, q, n in ALLOWED)


# --- (a) no bare builtin reaches a user ------------------------------------------------------


def test_no_bare_builtin_raise_outside_the_allow_list():
    bad = [f"{path}:{line}: raise {name} in {qual or '<module>'}"
           for path, line, _, qual, name in bare_raises() if not is_allowed(path, qual, name)]
    assert not bad, ("raise a member of fmu_surrogate.errors (or the sub-package's own error) "
                     "instead of a bare builtin:\n" + "\n".join(bad))


def test_the_scan_finds_what_it_should():
    # the scan itself: the allow-listed places exist (no stale entries), and it sees raises
    found = bare_raises()
    assert any(name == "NotImplementedError" for *_, name in found)
    for p, q, n in ALLOWED:
        assert any(fnmatch(path, p) and fnmatch(qual, q) and name == n
                   for path, _, _, qual, name in found), (p, q, n)


# --- (b) every error class of the package is one of the family ---------------------------------


def _package_exception_classes() -> list[type[BaseException]]:
    classes = []
    for mod in pkgutil.walk_packages(fs.__path__, "fmu_surrogate."):
        if mod.name.endswith("__main__"):
            continue
        module = importlib.import_module(mod.name)
        classes += [c for c in vars(module).values()
                    if inspect.isclass(c) and issubclass(c, BaseException)
                    and c.__module__ == mod.name]
    return classes


def test_every_error_class_of_the_package_derives_from_the_base():
    classes = _package_exception_classes()
    assert len(classes) > 30  # the walk really imported the sub-packages
    names = {f"{c.__module__}.{c.__qualname__}" for c in classes}
    assert set(ALLOWED_CLASSES) <= names  # no stale entries
    bad = [f"{c.__module__}.{c.__qualname__}" for c in classes
           if not issubclass(c, fs.FmuSurrogateError)
           and f"{c.__module__}.{c.__qualname__}" not in ALLOWED_CLASSES]
    assert not bad, f"derive these from fmu_surrogate.errors.FmuSurrogateError: {bad}"


FAMILY = [
    (errors.InvalidInputError, ValueError),
    (errors.InvalidTypeError, TypeError),
    (errors.NotFoundError, KeyError),
    (errors.MissingFileError, FileNotFoundError),
    (errors.UnavailableError, AttributeError),
    (errors.ComputationError, RuntimeError),
    (errors.NumericalError, FloatingPointError),
]


@pytest.mark.parametrize(("cls", "builtin"), FAMILY, ids=lambda c: c.__name__)
def test_family_member_is_the_base_and_its_builtin_and_public(cls, builtin):
    assert issubclass(cls, fs.FmuSurrogateError) and issubclass(cls, builtin)
    assert getattr(fs, cls.__name__) is cls
    assert cls.__name__ in errors.__all__
    assert str(cls("the problem; the fix.")) == "the problem; the fix."


def test_not_found_reads_like_a_sentence_not_a_quoted_key():
    assert str(errors.NotFoundError("run 7 is not in the dataset.")) == \
        "run 7 is not in the dataset."
    assert str(KeyError("x")) == "'x'"  # what the override avoids


# --- (c) real user mistakes: both the family and the old builtin ------------------------------


@contextlib.contextmanager
def _raises_both(builtin: type[BaseException], match: str):
    """``pytest.raises`` for an error that is a FmuSurrogateError and ``builtin``."""
    with pytest.raises(builtin, match=match) as info:
        yield info
    assert isinstance(info.value, fs.FmuSurrogateError), type(info.value)


def test_bad_signal_description():
    from fmu_surrogate.fmu.signals import signal_from_description

    with _raises_both(ValueError, "unknown signal kind 'sine-ish'"):
        signal_from_description({"kind": "sine-ish"})


def test_linear_ph_with_a_non_skew_j():
    with _raises_both(ValueError, "J"):
        fs.LinearPH(J=[[0.0, 1.0], [1.0, 0.0]], R=np.zeros((2, 2)), Q=np.eye(2), B=[[1.0], [0.0]])


def test_unknown_variable_in_a_harvest(faulty_fmu, tmp_path):
    with _raises_both(KeyError, "unknown variable 'kk'"):
        fs.harvest(faulty_fmu, tmp_path / "x.nc", parameters=[{"kk": 1.0}], progress=False)


def test_wrong_shaped_array_to_an_estimator():
    t = np.linspace(0.0, 1.0, 50)
    with _raises_both(ValueError, "must have shape"):
        fs.estimate_derivatives(t, np.ones((49, 2)))
    with _raises_both(ValueError, "u must have shape"):
        fs.simulate(fs.LinearPH(J=np.zeros((1, 1)), R=np.eye(1), Q=np.eye(1), B=np.eye(1)),
                    t, u=np.ones((49, 1)), x0=[0.0])


def test_missing_dataset_file_and_unknown_run(tmp_path):
    with _raises_both(FileNotFoundError, "no such dataset file"):
        fs.load_dataset(tmp_path / "nope.nc")
    ds = fs.load_dataset(ROOT / "tests" / "fmu" / "fixtures" / "dataset_v1.nc")
    with _raises_both(KeyError, r"^run 999 is not in the dataset \(runs: \[0, 1, 2\]\)\.$"):
        fs.run_arrays(ds, ["x"], runs=[999])


def test_hamiltonian_of_a_system_built_without_one():
    system = fs.PHDAE(E=np.eye(1), J=np.zeros((1, 1)), R=np.eye(1), B=np.eye(1),
                      effort=lambda x: x)
    with _raises_both(AttributeError, "this system has no Hamiltonian"):
        system.hamiltonian(np.zeros(1))
