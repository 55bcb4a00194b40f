"""The package layout: imports run one way, no cycles, no game imports another, the environment knows no game."""

from __future__ import annotations

import ast
from pathlib import Path

import saboteur_env

ROOT = Path(saboteur_env.__file__).parent
GAMES = ("base", "sab2", "duel")


def _module_name(path: Path) -> str:
    parts = path.relative_to(ROOT.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path) -> set[str]:
    """saboteur_env modules imported anywhere in the file (functions included), except ``if TYPE_CHECKING``."""
    tree = ast.parse(path.read_text())
    skip: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            skip.update(id(n) for stmt in node.body for n in ast.walk(stmt))
    out: set[str] = set()
    for node in ast.walk(tree):
        if id(node) in skip:
            continue
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names if a.name.startswith("saboteur_env"))
        elif isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("saboteur_env"):
            # ``from saboteur_env.x import y`` may import the submodule ``x.y``
            for a in node.names:
                sub = f"{node.module}.{a.name}"
                out.add(sub if (ROOT.parent / (sub.replace(".", "/") + ".py")).exists()
                        or (ROOT.parent / sub.replace(".", "/")).is_dir() else node.module)  # fmt: skip
    return out


def _graph() -> dict[str, set[str]]:
    return {_module_name(p): _imports(p) for p in ROOT.rglob("*.py")}


def _layer(module: str) -> str:
    parts = module.split(".")
    if len(parts) == 1:
        return "package"
    return parts[1]


# Who may import whom (by top-level part of saboteur_env): package -> api -> variants -> each game -> common.
ALLOWED = {
    "package": {"package", "api", "variants", "common", "aec", "vector", "core", "learner", "transitions",
                "single_seat",
                *GAMES},
    "aec": {"api", "claims", "common"},
    "single_seat": {"aec", "common"},  # the Gymnasium single-seat view over the AEC environment
    "pictures": {"pictures", "api", "common", *GAMES},
    # The compiled core's machinery (batch arenas, RNG, jit helpers, the sampler) knows no game: each game's kernels
    # live in its own package. The vector environment knows no game either: it reaches the kernels through the
    # variant's ``core`` module name.
    "core": {"core", "common"},
    "vector": {"claims", "core", "common"},
    # The RL-library views over the vector env (issue 38): the learner-seat Gymnasium vector env, the per-seat
    # transition helper (numpy only) and the PufferLib binding over the learner-seat env.
    "learner": {"vector", "common"},
    "transitions": {"common"},
    "puffer": {"learner", "common"},
    # The text interface reads views and layouts through the API and the games' spec modules.
    "text": {"text", "api", "claims", "common", *GAMES},
    # The claims layer (issue 18) reads the games' card data for its truth labels.
    "claims": {"common", *GAMES},
    # The compile warm-up drives the public API and the vector env (a tool over them, like experiments/).
    "warmup": {"package", "variants", "vector"},
    "cli": set(),  # console scripts: they import the repository's experiments/ by name, nothing of the package
    "api": {"variants", "common"},
    "variants": {"common", *GAMES},
    "common": {"common"},
    # A game is one package (its card data, layouts, views, kernels, compiled state and reference engine); it
    # builds on the shared ground and the core's game-independent machinery, never on another game.
    **{game: {game, "common", "core"} for game in GAMES},
}
# A game's numpy reference engine (``<game>.reference``, the test oracle) is internal: outside tests/, only its own
# game's record building for conversions and hand-built positions may import it (the module's docstring).
REFERENCE_ENGINES = {f"saboteur_env.{g}.reference" for g in GAMES}
REFERENCE_IMPORTERS = {f"saboteur_env.{g}.{m}" for g in GAMES for m in ("convert", "positions")}


def test_architecture__imports_run_one_way():
    bad = []
    for module, imported in _graph().items():
        layer = _layer(module)
        for target in imported:
            if _layer(target) not in ALLOWED[layer]:
                bad.append(f"{module} imports {target}")
    assert not bad, "\n".join(sorted(bad))


def test_architecture__the_reference_engine_is_internal():
    """Nothing a user runs plays the numpy reference: only conversions and positions build records with it, and
    agents / experiments never import it (issue 13: one implementation of the rules that users run)."""
    graph = _graph()
    assert REFERENCE_ENGINES <= set(graph)  # the checker looks for modules that exist
    bad = sorted(f"{m} imports {t}" for m, imported in graph.items() for t in imported
                 if t in REFERENCE_ENGINES and m != t and m not in REFERENCE_IMPORTERS)  # fmt: skip
    repo = ROOT.parent
    for folder in ("agents", "experiments"):
        for path in sorted((repo / folder).rglob("*.py")):
            rel = path.relative_to(repo)
            bad += [f"{rel} imports {t}" for t in _imports(path) if t in REFERENCE_ENGINES]
    assert not bad, "\n".join(bad)
    for g in GAMES:  # the old rules modules are gone from the games' packages
        assert not (ROOT / g / "rules.py").exists()
    # one game, one place: no package of reference engines beside the games, no game's kernels in core/
    assert not any(m.startswith("saboteur_env._reference") for m in graph)
    assert not any(m.startswith(f"saboteur_env.core.{g}") for m in graph for g in GAMES)


def test_architecture__no_import_cycles():
    graph = _graph()
    modules = set(graph)

    def edges(m: str) -> set[str]:
        # ``import saboteur_env.x`` runs the package first; the package itself is the entry point, not a dependency
        return {t for t in graph[m] if t in modules and t != "saboteur_env"}

    state: dict[str, int] = {}
    stack: list[str] = []
    cycles: list[list[str]] = []

    def visit(m: str) -> None:
        state[m] = 1
        stack.append(m)
        for t in edges(m):
            if state.get(t) == 1:
                cycles.append([*stack[stack.index(t) :], t])
            elif t not in state:
                visit(t)
        stack.pop()
        state[m] = 2

    for m in sorted(modules):
        if m not in state:
            visit(m)
    assert not cycles, cycles


def test_architecture__the_checker_can_fail(tmp_path):
    """The import parser sees function-level imports and skips only TYPE_CHECKING blocks."""
    f = tmp_path / "m.py"
    f.write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from saboteur_env.sab2 import cards\n"
        "def g():\n    from saboteur_env.duel import board\n"
    )
    assert _imports(f) == {"saboteur_env.duel.board"}


def _code_words(path: Path) -> set[str]:
    """Names, attributes and string constants of a module's code (docstrings excluded)."""
    tree = ast.parse(path.read_text())
    docstrings = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.FunctionDef, ast.ClassDef)) and ast.get_docstring(node) is not None:
            docstrings.add(id(node.body[0].value))  # type: ignore[attr-defined]
    words: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            words.add(node.id)
        elif isinstance(node, ast.Attribute):
            words.add(node.attr)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings:
            words.update(node.value.replace("'", " ").replace('"', " ").split())
    return words


def test_architecture__environment_and_api_name_no_game():
    game_words = {"sab2", "duel", "Sab2State", "DuelState", "GameState", "game=sab2", "game=duel"}
    for name in ("aec.py", "api.py"):
        assert not _code_words(ROOT / name) & game_words, name
    assert {"SAB2", "DUEL"} <= _code_words(ROOT / "variants.py")  # the checker does see names


def test_architecture__core_names_no_game():
    """``saboteur_env/core/`` keeps only what knows no game: the games' kernels live in their own packages."""
    game_words = {"sab2", "duel", "Sab2State", "DuelState", "GameState", "game=sab2", "game=duel", "base_state"}
    for path in sorted((ROOT / "core").glob("*.py")):
        assert not _code_words(path) & game_words, path.name


# --- The whole repository (issue 39): saboteur_env, agents and experiments ---------------------------------------
# Separate from the saboteur_env rules above: these see every package of the checkout, count type-only imports too
# (a cycle through ``if TYPE_CHECKING`` is still a knot in the design), and bound module size.

REPO = ROOT.parent
PACKAGES = ("saboteur_env", "agents", "experiments")
MAX_LINES = 600
# Compiled (numba) kernels: one game's whole rules in one module, kept together so numba compiles them as a unit.
# Matched by path suffix so the list survives the kernels' move from saboteur_env/core/ into the game packages.
KERNELS = ("saboteur_env/base/kernels.py", "saboteur_env/sab2/kernels.py", "saboteur_env/duel/kernels.py")


def _repo_module(path: Path) -> str:
    parts = path.relative_to(REPO).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _is_module(name: str) -> bool:
    base = REPO / name.replace(".", "/")
    return base.with_suffix(".py").is_file() or (base / "__init__.py").is_file()


def _repo_imports(path: Path) -> set[str]:
    """Repository modules the file imports anywhere: module level, functions, ``if TYPE_CHECKING`` blocks."""
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names if a.name.split(".")[0] in PACKAGES)
        elif isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] in PACKAGES:
            for a in node.names:  # ``from pkg import x`` imports the submodule pkg.x when there is one
                sub = f"{node.module}.{a.name}"
                out.add(sub if _is_module(sub) else node.module)
    return out


def _repo_graph() -> dict[str, set[str]]:
    return {_repo_module(p): _repo_imports(p) for pkg in PACKAGES for p in sorted((REPO / pkg).rglob("*.py"))}


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Import cycles; a package's ``__init__`` counts as the module it is (``from agents import x`` runs it)."""
    state: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(m: str) -> None:
        state[m] = 1
        stack.append(m)
        # a top-level package importing its own submodules is its public face, not a dependency of them
        for t in sorted(t for t in graph[m] if t in graph and t not in PACKAGES):
            if state.get(t) == 1:
                found.append([*stack[stack.index(t) :], t])
            elif t not in state:
                visit(t)
        stack.pop()
        state[m] = 2

    for m in sorted(graph):
        if m not in state:
            visit(m)
    return found


def test_repository__no_import_cycles_anywhere():
    cycles = _cycles(_repo_graph())
    assert not cycles, "\n".join(" -> ".join(c) for c in cycles)


def test_repository__layers():
    """experiments -> agents -> saboteur_env, never back: the library knows no agent or experiment, and agents
    know no experiment."""
    forbidden = {"saboteur_env": ("agents", "experiments"), "agents": ("experiments",), "experiments": ()}
    bad = sorted(f"{m} imports {t}" for m, imported in _repo_graph().items() for t in imported
                 if t.split(".")[0] in forbidden[m.split(".")[0]])  # fmt: skip
    assert not bad, "\n".join(bad)


def test_repository__modules_stay_small():
    big = []
    for pkg in PACKAGES:
        for path in sorted((REPO / pkg).rglob("*.py")):
            rel = path.relative_to(REPO).as_posix()
            lines = len(path.read_text().splitlines())
            if lines > MAX_LINES and not rel.endswith(KERNELS):
                big.append(f"{rel}: {lines} lines")
    assert not big, "\n".join(big)


def test_repository__the_cycle_checker_can_fail(tmp_path):
    """Type-only and function-level imports count; a cycle is found."""
    f = tmp_path / "m.py"
    f.write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import agents.base\n"
                 "def g():\n    from experiments.web import table\n")  # fmt: skip
    assert _repo_imports(f) == {"agents.base", "experiments.web.table"}
    assert _cycles({"a.x": {"a.y"}, "a.y": {"a.x"}}) == [["a.x", "a.y", "a.x"]]
    assert not _cycles({"agents": {"agents.x"}, "agents.x": {"agents"}})
