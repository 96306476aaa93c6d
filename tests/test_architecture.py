"""Structure rules of the package (CONTRIBUTING.md, docs/design.md §7), read from the source.

Each test parses every module of ``fmu_surrogate`` with :mod:`ast` (nothing is imported) and
fails with the offending module and line.

* **No import circles.**  The graph has one node per module (a package counts as its
  ``__init__``) and an edge for every ``import`` statement anywhere in the module: at module
  level, inside functions and methods (a deferred import is still a dependency; moving it into a
  function hides a circle without removing it), inside ``try`` blocks and under
  ``if TYPE_CHECKING:`` (a module that names another's type in its signatures depends on it;
  describe what you need as a ``Protocol`` in the lower module instead).  Only the
  ``TYPE_CHECKING`` block of a package ``__init__`` is left out: it declares the names the
  package loads lazily, on first access, for type checkers.
  ``from a.b import c`` is an edge to the module ``a.b.c`` when ``c`` is a module, else to
  ``a.b`` (for a package: its ``__init__``).  Running a package's ``__init__`` on the way to one
  of its modules is *not* an edge: otherwise every package that gathers the names of its
  modules would be in a circle with each of them.  An explicit import of a package *is* an edge
  to its ``__init__``, so a module that imports names through its own package's ``__init__``
  (which imports that module back) makes a circle and is reported: import from the real home.
* **No private name across folders.**  ``from m import _name`` (or ``m._name`` on a module
  bound by an import) is allowed only when ``m`` lives in the importer's own folder; a leading
  underscore means "this folder only".  A package ``__init__`` lives in its own folder.
* **Small modules, small folders.**  No module over 500 lines (a module awaiting its split is
  listed in ``LONG_MODULES`` and may not grow); no folder with more than 12 modules
  (``__init__`` and ``__main__`` not counted).
* **No re-export shims.**  A name imported from another module of the package must be used by
  the importing module, not parked in a tuple or under a second name only to be importable from
  there (``_REEXPORTED_HELPERS = (helper, ...)``, ``_Old = new``) nor left unused.  A package
  ``__init__`` may gather the public names of its own modules; it re-exports no private name.
  A public name listed in a module's ``__all__`` counts as used: that module declares it as part
  of its API on purpose.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PKG = ROOT / "fmu_surrogate"

MAX_LINES = 500
MAX_MODULES_PER_FOLDER = 12

#: Modules over MAX_LINES awaiting their split, with their length: they must not grow, and a
#: module leaves this table when it is split (the test says so).
LONG_MODULES: dict[str, int] = {}


@dataclass
class Module:
    """One parsed module of the package."""

    name: str  # dotted, a package is named without ``__init__``
    path: Path
    is_package: bool
    tree: ast.Module
    # (line, imported module, imported name or None, in TYPE_CHECKING block)
    imports: list[tuple[int, str, str | None, bool]] = field(default_factory=list)

    @property
    def folder(self) -> Path:
        return self.path.parent

    root: Path = ROOT

    @property
    def rel(self) -> str:
        return self.path.relative_to(self.root).as_posix()


def _module_name(path: Path, root: Path) -> tuple[str, bool]:
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        return ".".join(parts[:-1]), True
    return ".".join(parts), False


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _resolve(mod: Module, node: ast.ImportFrom) -> str:
    if not node.level:
        return node.module or ""
    base = mod.name.split(".") if mod.is_package else mod.name.split(".")[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def _collect_imports(mod: Module) -> None:
    def visit(node: ast.AST, type_checking: bool) -> None:
        if isinstance(node, ast.If) and _is_type_checking(node.test):
            for child in node.body:
                visit(child, True)
            for child in node.orelse:
                visit(child, type_checking)
            return
        if isinstance(node, ast.Import):
            for alias in node.names:
                mod.imports.append((node.lineno, alias.name, None, type_checking))
        elif isinstance(node, ast.ImportFrom):
            source = _resolve(mod, node)
            for alias in node.names:
                mod.imports.append((node.lineno, source, alias.name, type_checking))
        for child in ast.iter_child_nodes(node):
            visit(child, type_checking)

    visit(mod.tree, False)


@cache
def modules(package: Path = PKG) -> dict[str, Module]:
    """Every module of ``package`` (a folder), parsed, by dotted name."""
    found = {}
    root = package.parent
    for path in sorted(package.rglob("*.py")):
        name, is_package = _module_name(path, root)
        mod = Module(name, path, is_package, ast.parse(path.read_text(), filename=str(path)),
                     root=root)
        _collect_imports(mod)
        found[name] = mod
    return found


def _target(mods: dict[str, Module], source: str, name: str | None) -> str | None:
    """The module of the package that ``from source import name`` depends on, if any."""
    if name is not None and f"{source}.{name}" in mods:
        return f"{source}.{name}"
    return source if source in mods else None


def import_edges(mods: dict[str, Module]) -> dict[str, dict[str, int]]:
    """module -> {module it imports: first line} (not the TYPE_CHECKING block of a package)."""
    edges: dict[str, dict[str, int]] = {}
    for mod in mods.values():
        out = edges.setdefault(mod.name, {})
        for line, source, name, type_checking in mod.imports:
            target = _target(mods, source, name)
            if target is None or target == mod.name or (type_checking and mod.is_package):
                continue
            out.setdefault(target, line)
    return edges


def _cycles(edges: dict[str, dict[str, int]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan), sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components = []

    def strongconnect(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in edges.get(v, {}):
            if w not in index:
                strongconnect(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                components.append(sorted(component))

    for v in sorted(edges):
        if v not in index:
            strongconnect(v)
    return sorted(components)


def _describe_cycle(component: list[str], edges: dict[str, dict[str, int]],
                    mods: dict[str, Module]) -> str:
    members = set(component)
    lines = [f"  circle of {len(component)} modules:"]
    for v in component:
        for w, line in sorted(edges[v].items()):
            if w in members:
                lines.append(f"    {mods[v].rel}:{line} imports {w}")
    return "\n".join(lines)


def import_circles(mods: dict[str, Module]) -> list[str]:
    edges = import_edges(mods)
    return [_describe_cycle(c, edges, mods) for c in _cycles(edges)]


def test_no_import_circles():
    circles = import_circles(modules())
    assert not circles, (
        "import circles (move the shared piece to the module it belongs to; a deferred import "
        "inside a function does not remove a circle):\n" + "\n".join(circles))


def _is_private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def _module_aliases(mod: Module, mods: dict[str, Module]) -> dict[str, str]:
    """Local names bound to modules of the package by ``import a.b as m`` / ``from a import b``."""
    aliases = {}
    for node in ast.walk(mod.tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname and alias.name in mods:
                    aliases[alias.asname] = alias.name
        elif isinstance(node, ast.ImportFrom):
            source = _resolve(mod, node)
            for alias in node.names:
                if f"{source}.{alias.name}" in mods:
                    aliases[alias.asname or alias.name] = f"{source}.{alias.name}"
    return aliases


def private_imports(mods: dict[str, Module]) -> list[str]:
    bad = []
    for mod in mods.values():
        for line, source, name, _ in mod.imports:
            target = _target(mods, source, name)
            if target is None:
                continue
            home = mods[target]
            private = (name is not None and _is_private(name)) or any(
                _is_private(part) for part in target.split("."))
            if private and home.folder != mod.folder:
                bad.append(f"  {mod.rel}:{line} imports {name or target} from {source}")
        aliases = _module_aliases(mod, mods)
        for node in ast.walk(mod.tree):
            if (isinstance(node, ast.Attribute) and _is_private(node.attr)
                    and isinstance(node.value, ast.Name) and node.value.id in aliases
                    and mods[aliases[node.value.id]].folder != mod.folder):
                bad.append(f"  {mod.rel}:{node.lineno} uses {node.value.id}.{node.attr} "
                           f"of {aliases[node.value.id]}")
    return sorted(bad)


def test_no_private_names_across_folders():
    bad = private_imports(modules())
    assert not bad, (
        "private names used outside their folder (make the name public under a name that says "
        "what it is, or move the code to the folder that uses it):\n" + "\n".join(bad))


def long_modules(mods: dict[str, Module], waiting: dict[str, int]) -> list[str]:
    bad = []
    for mod in mods.values():
        n = len(mod.path.read_text().splitlines())
        allowed = waiting.get(mod.rel, MAX_LINES)
        if n > allowed:
            bad.append(f"  {mod.rel}: {n} lines")
        elif mod.rel in waiting and n <= MAX_LINES:
            bad.append(f"  {mod.rel}: {n} lines now; remove it from LONG_MODULES")
    listed = {m.rel for m in mods.values()}
    return bad + [f"  {rel}: listed in LONG_MODULES but gone" for rel in waiting
                  if rel not in listed]


def test_no_long_modules():
    bad = long_modules(modules(), LONG_MODULES)
    assert not bad, (f"modules over {MAX_LINES} lines (split them into modules with one job "
                     "each):\n" + "\n".join(bad))


def crowded_folders(mods: dict[str, Module]) -> list[str]:
    bad = []
    for folder, root in sorted({(m.folder, m.root) for m in mods.values()}):
        names = [p.name for p in folder.glob("*.py") if p.stem not in ("__init__", "__main__")]
        if len(names) > MAX_MODULES_PER_FOLDER:
            bad.append(f"  {folder.relative_to(root).as_posix()}: {len(names)} modules")
    return bad


def test_no_crowded_folders():
    bad = crowded_folders(modules())
    assert not bad, (f"folders with more than {MAX_MODULES_PER_FOLDER} modules (group related "
                     "modules in a sub-package):\n" + "\n".join(bad))


def _shim_tuples(mod: Module, imported: set[str]) -> list[ast.Assign | ast.AnnAssign]:
    """Module-level names bound to an imported name, or to a tuple, list or set of them only."""
    shims = []
    for node in mod.tree.body:
        if not isinstance(node, (ast.Assign, ast.AnnAssign)) or node.value is None:
            continue
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        if any(isinstance(t, ast.Name) and t.id == "__all__" for t in targets):
            continue
        value = node.value
        elts = value.elts if isinstance(value, (ast.Tuple, ast.List, ast.Set)) else [value]
        if elts and all(isinstance(e, ast.Name) and e.id in imported for e in elts):
            shims.append(node)
    return shims


def _used_names(tree: ast.AST, skip: list[ast.AST]) -> set[str]:
    """Names read anywhere (string annotations included) outside the ``skip`` statements."""
    skipped = {id(n) for s in skip for n in ast.walk(s)}
    used = set()
    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
            used.add(node.id)
        elif isinstance(node, ast.Attribute):
            continue
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            try:
                expr = ast.parse(node.value, mode="eval")
            except SyntaxError:
                continue
            used.update(n.id for n in ast.walk(expr) if isinstance(n, ast.Name))
    return used


def reexport_shims(mods: dict[str, Module]) -> list[str]:
    bad = []
    for mod in mods.values():
        imported: dict[str, int] = {}
        for node in mod.tree.body:
            if isinstance(node, ast.ImportFrom) and _target(mods, _resolve(mod, node), None):
                for alias in node.names:
                    if alias.name == "*":
                        continue
                    imported[alias.asname or alias.name] = node.lineno
                    if mod.is_package and _is_private(alias.name):
                        bad.append(f"  {mod.rel}:{node.lineno} re-exports the private name "
                                   f"{alias.name}")
        shims = _shim_tuples(mod, set(imported))
        for node in shims:
            names = ", ".join(n.id for n in ast.walk(node.value) if isinstance(n, ast.Name))
            bad.append(f"  {mod.rel}:{node.lineno} keeps imported names only to re-export them "
                       f"({names})")
        if mod.is_package:
            continue  # a package gathers the public names of its modules
        # a name a module imports and never uses is there only to be imported from it
        used = _used_names(mod.tree, shims)
        for local, line in sorted(imported.items(), key=lambda kv: kv[1]):
            if local not in used:
                bad.append(f"  {mod.rel}:{line} imports {local} without using it")
    return sorted(bad)


def test_no_reexport_shims():
    bad = reexport_shims(modules())
    assert not bad, (
        "re-export shims (import the name from the module that defines it and delete the "
        "shim):\n" + "\n".join(bad))


def test_the_checks_name_each_violation(tmp_path):
    # a small package with one violation of each rule: each check reports it with its line
    pkg = tmp_path / "pkg"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "sub" / "__init__.py").write_text("")
    (pkg / "a.py").write_text("def f():\n    from pkg.b import g\n    return g\n")
    (pkg / "b.py").write_text("from pkg import a\n\n\ndef g():\n    return a.f\n")
    (pkg / "sub" / "c.py").write_text("def _helper():\n    return 1\n")
    (pkg / "sub" / "d.py").write_text("from pkg.sub.c import _helper\n\nX = _helper()\n")
    (pkg / "e.py").write_text("from pkg.sub.c import _helper\n\n_KEEP = (_helper,)\n")
    (pkg / "long.py").write_text("x = 1\n" * (MAX_LINES + 1))
    for k in range(MAX_MODULES_PER_FOLDER + 1):
        (pkg / "sub" / f"m{k}.py").write_text("")
    mods = modules(pkg)
    circles = import_circles(mods)
    assert len(circles) == 1 and "pkg/a.py:2 imports pkg.b" in circles[0]
    assert "pkg/b.py:1 imports pkg.a" in circles[0]
    assert private_imports(mods) == ["  pkg/e.py:1 imports _helper from pkg.sub.c"]
    assert long_modules(mods, {}) == [f"  pkg/long.py: {MAX_LINES + 1} lines"]
    assert crowded_folders(mods) == [f"  pkg/sub: {MAX_MODULES_PER_FOLDER + 3} modules"]
    assert reexport_shims(mods) == [
        "  pkg/e.py:1 imports _helper without using it",
        "  pkg/e.py:3 keeps imported names only to re-export them (_helper)"]
