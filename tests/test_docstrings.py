"""The public API documents itself: numpydoc docstrings name every parameter, examples run.

Modelled on python-control's docstring test: for every public function and class reachable as
``fmu_surrogate.<name>`` (and the public methods of those classes), each parameter of the
signature appears in the docstring's *Parameters* section, and nothing is documented that the
signature does not have.  The examples in those docstrings run as doctests.
"""

from __future__ import annotations

import doctest
import inspect

import pytest
from numpydoc.docscrape import ClassDoc, FunctionDoc

import fmu_surrogate as fs

_SKIP_PARAMS = {"self", "cls"}


def _public_objects():
    for name in fs.__all__:
        obj = getattr(fs, name)
        if inspect.ismodule(obj) or (inspect.isclass(obj) and issubclass(obj, BaseException)):
            continue
        yield name, obj
        if inspect.isclass(obj):
            for meth_name, meth in vars(obj).items():
                if meth_name.startswith("_") or not inspect.isfunction(meth):
                    continue
                yield f"{name}.{meth_name}", meth


def _documented(doc) -> set[str]:
    names = set()
    for section in ("Parameters", "Other Parameters"):
        for p in doc[section]:
            for n in p.name.split(","):
                names.add(n.strip().lstrip("*"))
    return names


def _signature_params(func) -> set[str]:
    try:
        sig = inspect.signature(func)
    except (TypeError, ValueError):
        return set()
    return {
        p.name
        for p in sig.parameters.values()
        if p.name not in _SKIP_PARAMS and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
    }


def _var_params(func) -> set[str]:
    try:
        sig = inspect.signature(func)
    except (TypeError, ValueError):
        return set()
    return {p.name for p in sig.parameters.values() if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD)}


OBJECTS = dict(_public_objects())


@pytest.mark.parametrize("name", sorted(OBJECTS))
def test_parameters_are_documented(name):
    obj = OBJECTS[name]
    assert inspect.getdoc(obj), f"{name} has no docstring"
    if inspect.isclass(obj):
        doc = ClassDoc(obj, config={"show_class_members": False})
        params = _signature_params(obj.__init__)
    else:
        doc = FunctionDoc(obj)
        params = _signature_params(obj)
    documented = _documented(doc)
    missing = sorted(params - documented)
    varargs = _var_params(obj.__init__ if inspect.isclass(obj) else obj)
    extra = sorted(documented - params - varargs) if params else []
    assert not missing, f"{name}: parameters not in its docstring: {missing}"
    assert not extra, f"{name}: documented but not in the signature: {extra}"


def _doctests():
    finder = doctest.DocTestFinder(exclude_empty=True)
    seen = set()
    for name, obj in OBJECTS.items():
        for t in finder.find(obj, name, module=inspect.getmodule(obj)):
            if t.examples and t.name not in seen:
                seen.add(t.name)
                yield t


DOCTESTS = {t.name: t for t in _doctests()}


@pytest.mark.parametrize("name", sorted(DOCTESTS))
def test_docstring_examples_run(name, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    result = runner.run(DOCTESTS[name])
    assert result.failed == 0, f"{result.failed} of {result.attempted} examples of {name} failed"
