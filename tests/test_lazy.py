"""lazy_exports: one loader for every package's lazily re-exported names."""

import sys
import types

import pytest

from fmu_surrogate.lazy import lazy_exports


@pytest.fixture
def package(monkeypatch):
    pkg = types.ModuleType("lazy_pkg_under_test")
    monkeypatch.setitem(sys.modules, pkg.__name__, pkg)
    pkg.__getattr__, pkg.__dir__ = lazy_exports(pkg.__name__, {
        "sqrt": "math",                # the attribute of that name
        "json": "json:",               # the module itself
    })
    return pkg


def test_names_resolve_to_attribute_or_module_and_are_kept(package):
    import json
    import math

    assert package.sqrt is math.sqrt
    assert package.json is json
    assert vars(package)["sqrt"] is math.sqrt  # stored: the next look-up skips __getattr__


def test_dir_lists_lazy_names_before_first_use(package):
    assert {"sqrt", "json"} <= set(dir(package))


def test_unknown_name_is_an_attribute_error_naming_package_and_name(package):
    with pytest.raises(AttributeError, match="'lazy_pkg_under_test' has no attribute 'nope'"):
        package.nope  # noqa: B018
