"""The house plan of include/cdcflow/ (README, Layout): subpackages that mirror the cycle,
what each may import, no reaching into another module's private names, no Airflow."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "include" / "cdcflow"

# subpackage -> the subpackages (or single modules) it may import; README's layout table
# says the same in words.  core reads the DDL type registry for the event names a config
# may give, and nothing else of the packages above it.
MAY_IMPORT = {
    "core": {"ddl.types"},
    "ddl": {"core"},
    "source": {"core"},
    "filter": {"core", "ddl"},
    "store": {"core", "ddl"},
    "sink": {"core", "ddl", "filter", "store"},
    "verify": {"core", "ddl", "filter", "source", "sink", "store"},
    "snapshot": {"core", "ddl", "filter", "source", "sink", "store", "verify"},
    "changefeed": {"core", "ddl", "filter", "source", "sink", "store", "verify", "snapshot"},
    "spark": {"core"},
    "stages": {"core", "ddl", "filter", "source", "sink", "store", "verify", "changefeed", "spark"},
    "runner": {"core", "ddl", "filter", "source", "sink", "store", "verify", "snapshot", "changefeed", "spark",
               "stages"},
    "devtools": {"core", "ddl", "filter", "source", "sink", "store", "verify", "snapshot", "changefeed", "spark",
                 "stages", "runner", "cli"},
}
TOP_LEVEL_MODULES = {"__init__.py", "cli.py"}


def _modules():
    for path in sorted(PACKAGE.rglob("*.py")):
        yield path, ast.parse(path.read_text(), str(path))


def _cdcflow_imports(tree):
    """(imported module, names, line) for every import of cdcflow, lazy ones included."""
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            if node.module == "cdcflow" or node.module.startswith("cdcflow."):
                yield node.module, [a.name for a in node.names], node.lineno
        elif isinstance(node, ast.ImportFrom) and node.level:
            yield "." * node.level + (node.module or ""), [a.name for a in node.names], node.lineno
        elif isinstance(node, ast.Import):
            for a in node.names:
                if a.name.split(".")[0] in ("cdcflow", "airflow"):
                    yield a.name, [], node.lineno


def _part(path: Path) -> str:
    rel = path.relative_to(PACKAGE)
    return rel.parts[0] if len(rel.parts) > 1 else rel.stem


def test_top_level_holds_packages_and_the_cli():
    loose = {p.name for p in PACKAGE.glob("*.py")}
    assert loose <= TOP_LEVEL_MODULES, sorted(loose - TOP_LEVEL_MODULES)
    packages = {p.name for p in PACKAGE.iterdir() if (p / "__init__.py").exists()}
    assert packages == set(MAY_IMPORT), sorted(packages ^ set(MAY_IMPORT))


def test_subpackages_import_only_what_the_plan_allows():
    wrong = []
    for path, tree in _modules():
        part = _part(path)
        if part not in MAY_IMPORT:
            continue
        for module, names, line in _cdcflow_imports(tree):
            assert not module.startswith("."), f"{path}:{line}: relative import"
            if module == "cdcflow":
                targets = {n for n in names if not n.startswith("__")}
            elif len(module.split(".")) == 2:  # from cdcflow.pkg import module, ...
                targets = {f"{module.split('.')[1]}.{n}" for n in names}
            else:
                targets = {".".join(module.split(".")[1:3])}
            allowed = MAY_IMPORT[part] | {part}
            for target in targets:
                if target in allowed or target.split(".")[0] in allowed:
                    continue
                wrong.append(f"{path.relative_to(PACKAGE)}:{line} imports {target}")
    assert not wrong, "\n".join(wrong)


def test_no_module_reaches_into_another_modules_private_names():
    wrong = []
    for path, tree in _modules():
        for module, names, line in _cdcflow_imports(tree):
            for n in names:
                if n.startswith("_") and not n.startswith("__"):
                    wrong.append(f"{path.relative_to(PACKAGE)}:{line} imports {module}.{n}")
    assert not wrong, "\n".join(wrong)


def test_the_library_never_imports_airflow():
    wrong = []
    for path, tree in _modules():
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom):
                names = [node.module or ""]
            elif isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            else:
                continue
            wrong += [f"{path.relative_to(PACKAGE)}:{node.lineno}" for n in names
                      if n.split(".")[0] == "airflow"]
    assert not wrong, wrong
