"""The package drawn as rooms and arrows: which sub-package imports which, read from the source.

A room is a sub-package of ``modeling_icc`` (a folder with ``__init__.py``); an arrow is "some module in
room A imports from room B". The package root's own files (``__init__``, ``__main__``, ``version``) are
the entrance, not a room. ``python tests/package_graph.py`` prints the counts docs/architecture.md quotes
(a test keeps them equal). The same scan, module by module (:func:`module_arrows`), finds import cycles
between files.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

PACKAGE_DIR = Path(__file__).resolve().parents[1] / "modeling_icc"
PACKAGE = PACKAGE_DIR.name


def rooms(package_dir: Path = PACKAGE_DIR) -> list[str]:
    """Dotted names of the sub-packages."""
    names = {".".join(p.parent.relative_to(package_dir.parent).parts) for p in package_dir.rglob("__init__.py")}
    return sorted(names - {package_dir.name})


def module_name(path: Path, package_dir: Path = PACKAGE_DIR) -> str:
    """The dotted name of the module at ``path`` (a package's ``__init__.py`` is the package)."""
    parts = path.relative_to(package_dir.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imported_modules(path: Path, package_dir: Path = PACKAGE_DIR, *, type_checking: bool = True) -> list[str]:
    """Every dotted name ``path`` imports (relative imports resolved), including imports inside functions;
    with ``type_checking=False``, not those under ``if TYPE_CHECKING:`` (never run, so they close no loop)."""
    module_parts = list(path.relative_to(package_dir.parent).with_suffix("").parts)
    package_parts = module_parts[:-1]
    tree = ast.parse(path.read_text(encoding="utf-8"))
    skipped = set() if type_checking else _type_checking_nodes(tree)
    names = []
    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
        if isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = package_parts[: len(package_parts) - node.level + 1] if node.level else []
            stem = ".".join([*base, *([node.module] if node.module else [])])
            names += [f"{stem}.{alias.name}" for alias in node.names]
    return names


def _type_checking_nodes(tree: ast.AST) -> set[int]:
    """``id`` of every node inside the body of an ``if TYPE_CHECKING:`` (or ``typing.TYPE_CHECKING``)."""
    return {
        id(inner)
        for node in ast.walk(tree)
        if isinstance(node, ast.If) and ast.unparse(node.test) in ("TYPE_CHECKING", "typing.TYPE_CHECKING")
        for statement in node.body
        for inner in ast.walk(statement)
    }


def room_of(module: str, all_rooms: list[str]) -> str | None:
    """The innermost room holding ``module`` (None for the package root's own files)."""
    holders = [room for room in all_rooms if module == room or module.startswith(room + ".")]
    return max(holders, key=len, default=None)


def arrows(package_dir: Path = PACKAGE_DIR) -> dict[str, set[str]]:
    """Room -> the other rooms its modules import from."""
    all_rooms = rooms(package_dir)
    graph: dict[str, set[str]] = {room: set() for room in all_rooms}
    for path in package_dir.rglob("*.py"):
        source = room_of(".".join(path.relative_to(package_dir.parent).with_suffix("").parts), all_rooms)
        if source is None:
            continue
        for name in imported_modules(path, package_dir):
            target = room_of(name, all_rooms) if name.startswith(package_dir.name + ".") else None
            if target is not None and target != source:
                graph[source].add(target)
    return graph


def module_arrows(package_dir: Path = PACKAGE_DIR) -> dict[str, set[str]]:
    """Module -> the other modules of the package it imports when it runs: imports inside functions count
    (a lazy import still closes a loop), those under ``if TYPE_CHECKING:`` do not. A name imported from a
    module counts as that module."""
    paths = {module_name(path, package_dir): path for path in package_dir.rglob("*.py")}

    def owner(name: str) -> str | None:
        while name and name not in paths:
            name = name.rpartition(".")[0]
        return name or None

    return {
        module: {
            target
            for name in imported_modules(path, package_dir, type_checking=False)
            if (target := owner(name)) is not None and target != module
        }
        for module, path in paths.items()
    }


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """One closed path for each back edge a depth-first walk meets (empty when the rooms form layers)."""
    state: dict[str, int] = {}
    found: list[list[str]] = []

    def visit(room: str, path: list[str]) -> None:
        state[room] = 1
        path.append(room)
        for target in sorted(graph[room]):
            if state.get(target) == 1:
                found.append([*path[path.index(target) :], target])
            elif target not in state:
                visit(target, path)
        path.pop()
        state[room] = 2

    for room in sorted(graph):
        if room not in state:
            visit(room, [])
    return found


def floors(graph: dict[str, set[str]]) -> dict[str, int]:
    """Each room's floor: 1 for a room that imports no other, else one above the highest room it imports."""
    level: dict[str, int] = {}

    def floor(room: str) -> int:
        if room not in level:
            level[room] = 1 + max((floor(target) for target in graph[room]), default=0)
        return level[room]

    for room in graph:
        floor(room)
    return level


if __name__ == "__main__":
    graph = arrows()
    loops = cycles(graph)
    if loops:
        sys.exit("import cycles between rooms: " + "; ".join(" -> ".join(loop) for loop in loops))
    level = floors(graph)
    print(f"{len(graph)} rooms on {max(level.values())} floors, {sum(map(len, graph.values()))} arrows, no cycle")
    for room in sorted(graph, key=lambda room: (level[room], room)):
        print(
            f"  floor {level[room]:2d}  {room.removeprefix(PACKAGE + '.'):24s} -> "
            + ", ".join(sorted(t.removeprefix(PACKAGE + ".") for t in graph[room]))
        )
