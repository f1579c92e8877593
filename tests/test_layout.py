"""The house plan of include/cdcflow/ (docs/design/index.md, its layout table): subpackages that mirror the cycle,
what each may import, no import circles, no reaching into another module's private names, no
Airflow, and the development tools (include/cdcflow_devtools/) beside the library, not in it."""

from __future__ import annotations

import ast
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
INCLUDE = REPO / "include"
PACKAGE = INCLUDE / "cdcflow"
DEVTOOLS = INCLUDE / "cdcflow_devtools"

# subpackage -> the subpackages (or single modules) it may import; the design's layout table
# says the same in words.  core, the lowest, imports no other part of cdcflow.
MAY_IMPORT = {
    "core": set(),
    "ddl": {"core"},
    "config": {"core", "ddl"},
    "source": {"core"},
    "filter": {"core", "ddl", "config"},
    "store": {"core", "ddl", "config"},
    "sink": {"core", "ddl", "config", "filter", "store"},
    "verify": {"core", "ddl", "config", "filter", "source", "sink", "store"},
    "snapshot": {"core", "ddl", "config", "filter", "source", "sink", "store", "verify"},
    "changefeed": {"core", "ddl", "config", "filter", "source", "sink", "store", "verify", "snapshot"},
    "spark": {"core"},
    "stages": {"core", "ddl", "config", "filter", "source", "sink", "store", "verify", "snapshot", "changefeed",
               "spark"},
    "launch": {"core", "ddl", "config", "filter", "source", "sink", "store", "verify", "snapshot", "changefeed",
               "spark", "stages"},
}
TOP_LEVEL_MODULES = {"__init__.py", "cli.py"}


def _modules(package: Path = PACKAGE):
    for path in sorted(package.rglob("*.py")):
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


# The Airflow glue reads and changes changefeeds through the changefeed API the CLI calls
# (cdcflow.changefeed: commands, status_view), never through the metadata store itself, so the
# page, the REST API and the CLI cannot drift apart.
AIRFLOW_GLUE = (REPO / "plugins", REPO / "dags")


def store_imports(tree) -> list[int]:
    """The lines of `tree` that import cdcflow.store or a module of it, lazy ones included."""
    lines = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            named = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
        elif isinstance(node, ast.Import):
            named = [a.name for a in node.names]
        else:
            continue
        if any(n == "cdcflow.store" or n.startswith("cdcflow.store.") for n in named):
            lines.append(node.lineno)
    return lines


def test_store_imports_are_found():
    text = ("from cdcflow.store import metastore\nfrom cdcflow import store\nimport cdcflow.store.engine\n"
            "def f():\n    from cdcflow.store.metastore import get_feed  # lazy: why\n"
            "from cdcflow.changefeed import commands\nfrom cdcflow.config.spec_store import load_spec\n")
    assert store_imports(ast.parse(text)) == [1, 2, 3, 5]


def test_the_airflow_glue_never_reads_the_metadata_store_itself():
    wrong = []
    for root in AIRFLOW_GLUE:
        for path in sorted(root.rglob("*.py")):
            rel = path.relative_to(REPO).as_posix()
            wrong += [f"{rel}:{line}" for line in store_imports(ast.parse(path.read_text(), str(path)))]
    assert not wrong, ("the Airflow glue imports cdcflow.store; call the changefeed API (cdcflow.changefeed) "
                       "instead, adding the function there if it is missing:\n" + "\n".join(wrong))


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(INCLUDE).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def import_graph(package: Path) -> dict[str, set[str]]:
    """module -> the modules of the same package it imports, at the top or inside a function:
    `from cdcflow.pkg import name` names the module pkg.name where there is one, else pkg."""
    trees = {_module_name(path): tree for path, tree in _modules(package)}
    graph = {}
    for name, tree in trees.items():
        edges = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                for alias in node.names:
                    target = next((t for t in (f"{node.module}.{alias.name}", node.module) if t in trees), None)
                    edges.add(target)
            elif isinstance(node, ast.Import):
                edges.update(a.name for a in node.names if a.name in trees)
        graph[name] = edges - {None, name}
    return graph


def import_circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm)."""
    index, low, stack, on_stack, circles = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while not component or component[-1] != v:
                component.append(stack.pop())
                on_stack.discard(component[-1])
            if len(component) > 1:
                circles.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return circles


def test_import_circles_are_found():
    assert import_circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert import_circles({"a": {"b"}, "b": set()}) == []


def test_no_import_circles_in_the_library_or_the_devtools():
    for package in (PACKAGE, DEVTOOLS):
        circles = import_circles(import_graph(package))
        assert not circles, "\n".join(" <-> ".join(c) for c in circles)


def part_graph(graph: dict[str, set[str]]) -> dict[str, set[str]]:
    """The module graph of the library folded by subpackage: part -> the other parts its modules
    import (cdcflow.cli and the package's own __init__ are parts of their own)."""
    def part(module: str) -> str:
        names = module.split(".")
        return names[1] if len(names) > 1 else names[0]
    folded: dict[str, set[str]] = {}
    for module, targets in graph.items():
        folded.setdefault(part(module), set()).update(part(t) for t in targets)
    return {p: targets - {p} for p, targets in folded.items()}


def test_part_circles_are_found():
    graph = {"cdcflow.core.config": {"cdcflow.ddl.types"}, "cdcflow.ddl.types": {"cdcflow.core.errors"},
             "cdcflow.core.errors": set()}
    assert import_circles(part_graph(graph)) == [["core", "ddl"]]


def test_no_two_parts_of_the_library_import_each_other():
    # the plan allows no circle, and neither does the code: not even one a plan's exception would let
    # through (core and ddl imported each other while core held the config)
    plan = {part: {t.split(".")[0] for t in allowed} for part, allowed in MAY_IMPORT.items()}
    assert not import_circles(plan)
    circles = import_circles(part_graph(import_graph(PACKAGE)))
    assert not circles, "\n".join(" <-> ".join(c) for c in circles)


def test_the_library_holds_no_development_tools():
    assert not (PACKAGE / "devtools").exists()
    wrong = [f"{path.relative_to(PACKAGE)}:{node.lineno}" for path, tree in _modules() for node in ast.walk(tree)
             if isinstance(node, (ast.Import, ast.ImportFrom))
             and any((n or "").startswith("cdcflow_devtools")
                      for n in ([node.module] if isinstance(node, ast.ImportFrom) else [a.name for a in node.names]))]
    assert not wrong, wrong


# the cycle's own rooms: the stages, and the launchers that drive them
CYCLE_ROOMS = {"stages", "launch"}


def _cycle_uses(tree):
    """(line, what) for every place a module takes or names the stage-level Cycle."""
    for node in ast.walk(tree):
        if isinstance(node, ast.arguments):
            for a in node.posonlyargs + node.args + node.kwonlyargs + [node.vararg, node.kwarg]:
                if a is not None and a.arg == "cycle":
                    yield a.lineno, "a parameter named cycle"
        elif isinstance(node, ast.Name) and node.id == "Cycle":
            yield node.lineno, "the name Cycle"
        elif isinstance(node, ast.Attribute) and node.attr == "Cycle":
            yield node.lineno, "the name Cycle"
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value.strip("'\" ") == "Cycle":
            yield node.lineno, "the annotation 'Cycle'"
        elif isinstance(node, ast.ImportFrom) and node.module:
            if node.module.startswith("cdcflow.stages.cycle") or (
                    node.module == "cdcflow.stages" and any(a.name == "cycle" for a in node.names)):
                yield node.lineno, "an import of cdcflow.stages.cycle"
            elif any(a.name == "Cycle" for a in node.names):
                yield node.lineno, "an import of Cycle"
        elif isinstance(node, ast.Import) and any(a.name.startswith("cdcflow.stages.cycle") for a in node.names):
            yield node.lineno, "an import of cdcflow.stages.cycle"


def test_only_the_cycles_rooms_take_a_cycle():
    # the rooms below the stages take what they need (a connection factory, a log callback,
    # plain values), so a reader and the import plan both see it
    wrong = []
    for path, tree in _modules():
        if _part(path) in CYCLE_ROOMS:
            continue
        wrong += [f"{path.relative_to(PACKAGE)}:{line}: {what}" for line, what in _cycle_uses(tree)]
    assert not wrong, "\n".join(wrong)


# No function of the library is over 60 lines: a longer one does several things, each of which
# reads better under a name of its own.  The compiled reader's loops (source/compiled_reader.pyx,
# Cython, not read here) are exempt: a call per packet costs there.  The functions below are over
# it and may stay until their modules are next changed; the list only shrinks (an entry no longer
# over the bound fails the test until it is removed).
FUNCTION_LINES = 60
LONG_FUNCTIONS: dict[str, str] = {}  # none: a function over the bound is split, or named here with why


def long_functions(tree, bound: int = FUNCTION_LINES) -> dict[str, int]:
    """{qualified name: lines} of the functions (methods and nested ones too) over `bound` lines."""
    found = {}

    def visit(node, prefix):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                name = prefix + child.name
                lines = child.end_lineno - child.lineno + 1
                if not isinstance(child, ast.ClassDef) and lines > bound:
                    found[name] = lines
                visit(child, name + ".")
            else:
                visit(child, prefix)

    visit(tree, "")
    return found


def test_long_functions_are_found():
    def body(indent: int, n: int) -> str:
        return "".join(" " * indent + f"x = {i}\n" for i in range(n))

    text = (f"def short():\n{body(4, 3)}\nclass C:\n    def long(self):\n{body(8, 2)}"
            f"        def inner():\n{body(12, 4)}{body(8, 1)}\n")
    assert long_functions(ast.parse(text), bound=4) == {"C.long": 9, "C.long.inner": 5}


def test_no_function_in_the_library_is_over_60_lines():
    found = {f"{path.relative_to(PACKAGE).as_posix()}:{name}": lines
             for path, tree in _modules() for name, lines in long_functions(tree).items()}
    wrong = [f"{where}: {lines} lines" for where, lines in found.items() if where not in LONG_FUNCTIONS]
    assert not wrong, (f"functions over {FUNCTION_LINES} lines (split each into functions named for what "
                       "they do):\n" + "\n".join(wrong))
    shorter = sorted(set(LONG_FUNCTIONS) - set(found))
    assert not shorter, f"no longer over {FUNCTION_LINES} lines: remove them from LONG_FUNCTIONS: {shorter}"


# An import inside a function says why it is not at the top: `# lazy: <why>` on its line or the
# line directly above (an import directly under one that says why shares its reason): pyspark
# and sqlglot on the paths that run without them, optional providers, Airflow's task-time and
# request-time modules, the import time of the DAG parse and of the CLI.
LAZY_SCANNED = (PACKAGE, REPO / "plugins", REPO / "dags")


def function_imports(tree) -> list[tuple[int, int]]:
    """(first line, last line) of every import inside a function, in order."""
    found = []

    def visit(node, in_function):
        for child in ast.iter_child_nodes(node):
            if in_function and isinstance(child, (ast.Import, ast.ImportFrom)):
                found.append((child.lineno, child.end_lineno))
            visit(child, in_function or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)))

    visit(tree, False)
    return sorted(found)


def imports_without_reason(text: str) -> list[int]:
    """The first lines of the imports inside functions of `text` that do not say why."""
    lines = text.splitlines()
    imports = function_imports(ast.parse(text))
    ends_at = {end: start for start, end in imports}
    said = {}
    for start, _end in imports:
        said[start] = ("# lazy:" in lines[start - 1]
                       or (start >= 2 and lines[start - 2].strip().startswith("# lazy:"))
                       or said.get(ends_at.get(start - 1), False))
    return [start for start, ok in said.items() if not ok]


def test_imports_without_reason_are_found():
    text = ("def f():\n    import a  # lazy: why\n    import b\n\n    import c\n"
            "    # lazy: why\n    from d import (\n        e,\n    )\n    import g\n"
            "def h():\n    import i  # noqa\n")
    assert imports_without_reason(text) == [5, 12]
    assert imports_without_reason("import a\n\n\ndef f():\n    return 1\n") == []


def test_an_import_inside_a_function_says_why():
    wrong = []
    for root in LAZY_SCANNED:
        for path in sorted(root.rglob("*.py")):
            rel = path.relative_to(REPO).as_posix()
            wrong += [f"{rel}:{line}" for line in imports_without_reason(path.read_text())]
    assert not wrong, "an import inside a function without `# lazy: <why>`:\n" + "\n".join(wrong)


# the ways to open a session on the downstream; the sinks use them, a stage hands the sinks its
# sink URI and options (sink.ddl_sink.DdlSink.open, sink.async_index.poll_downstream)
DOWNSTREAM_OPENERS = {"connect", "connect_with_retry", "open_downstream"}


def _opens_a_downstream_connection(tree):
    """(line, what) for every place a module imports pymysql or sink.connection, or calls a
    connect function other than the upstream's (`….source.connect()`)."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.name.split(".")[0] == "pymysql" or a.name == "cdcflow.sink.connection":
                    yield node.lineno, f"import {a.name}"
        elif isinstance(node, ast.ImportFrom) and node.module:
            if node.module.split(".")[0] == "pymysql" or node.module == "cdcflow.sink.connection" or (
                    node.module == "cdcflow.sink" and any(a.name == "connection" for a in node.names)):
                yield node.lineno, f"from {node.module} import ..."
        elif isinstance(node, ast.Call):
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
            upstream = isinstance(func, ast.Attribute) and isinstance(func.value, ast.Attribute) \
                and func.value.attr == "source"
            if name in DOWNSTREAM_OPENERS and not upstream:
                yield node.lineno, f"a call of {name}()"


def test_no_stage_opens_a_downstream_connection_itself():
    wrong = [f"{path.relative_to(PACKAGE)}:{line}: {what}" for path, tree in _modules(PACKAGE / "stages")
             for line, what in _opens_a_downstream_connection(tree)]
    assert not wrong, "\n".join(wrong)


def test_a_downstream_connection_in_a_stage_is_found():
    code = ("from cdcflow.sink import connection\nimport pymysql\n"
            "def f(cycle, args):\n    cycle.source.connect()\n    return connection.connect(args)\n")
    found = [what for _, what in _opens_a_downstream_connection(ast.parse(code))]
    assert found == ["from cdcflow.sink import ...", "import pymysql", "a call of connect()"]
