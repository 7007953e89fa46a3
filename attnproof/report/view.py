"""The facts every report states, decided once: status phrases, evidence order, errata, totals.

``document`` arranges these facts into the report's sections; the Markdown, LaTeX and terminal
renderers only format that document, so the three cannot disagree about what a result means.
"""

from __future__ import annotations

import json
import math
import re
import shlex
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path, PurePath

from attnproof.numeric import (
    BACKEND_FINDING,
    FINDING,
    NOT_EVALUATED,
    UNDECIDED_SHARE_NOTED,
    NumericRecord,
    undecided_share,
)
from attnproof.symbolic import CATALOG_DIR, DOCUMENT_TITLES, EXACT_EVALUATION

from .results import STATUSES, VERSIONED_PACKAGES, Report, TheoremResult
from .verdict import unstable_formats

# A number of a record as it may come: a float or int, None where there is none, or, read back
# from results JSON, the string "inf", "-inf" or "nan" (``results._finite``)
Measured = float | str | None
# A counterexample as a section shows it: (where, its values, the replay command or None)
Shown = tuple[str, object, str | None]

STATUS_MEANINGS = {
    "inconsistent": "two routes disagree (proof vs float64, or float64 vs the 50-digit "
                    "evaluation): a bug in the checker, the compiler or the implementation",
    "proved": "shown by a symbolic route: true for every size, unless its method names the sizes",
    "proved-bounded": "shown by a symbolic route for each size up to a bound",
    "checked": "no symbolic proof; numeric evidence only",
    "unchecked": "neither proved nor checked",
    "unstable": "holds, but fails its stability check in a lower precision",
    "refuted": "false, shown by a counterexample",
    "failed": "the outcome contradicts what the theorem declares",
    "error": "could not be checked",
}

# The tutorial's title, as a theorem's source begins with it (``Source.__str__``).
TUTORIAL_TITLE = DOCUMENT_TITLES["001_9db7190c12608696.txt"] + " "

# The temperature figure plots the scores and the table of the tutorial's §11.2: it belongs to
# the catalog's theorems of that section, never to a theorem that merely has a temperature.
TEMPERATURE_SECTION = TUTORIAL_TITLE + "§11.2 "


def status_phrase(t: TheoremResult) -> str:
    """The status with its method, e.g. "proved for sizes ≤ 3", as a reader wants it, and the
    share of undecided draws where it is large enough to weigh on the evidence."""
    undecided = undecided_phrase(t.numeric)
    return _status_words(t) + (f"; {undecided}" if undecided else "")


def undecided_phrase(records: list[NumericRecord]) -> str | None:
    """E.g. "23% of draws undecided in numpy float64": records whose undecided rows (the
    statement itself not finite there) pass ``UNDECIDED_SHARE_NOTED`` of what they drew."""
    noted = [(undecided_share(r.undecided or 0, r.instances or 0), r) for r in records]
    noted = [(share, r) for share, r in noted if share > UNDECIDED_SHARE_NOTED]
    if not noted:
        return None
    share, _ = max(noted, key=lambda pair: pair[0])
    places = ", ".join(f"{r.backend} {r.dtype}" for _, r in noted[:3])
    more = f" and {len(noted) - 3} more" if len(noted) > 3 else ""
    return f"up to {share:.0%} of draws undecided ({places}{more})"


def error_count(report: Report) -> int:
    """Every file or worker error, and every theorem in error none of those explains (a check
    that raised): the count every summary states."""
    explained = {error.theorem for error in report.errors if error.theorem}
    return len(report.errors) + sum(t.status == "error" and t.name not in explained
                                    for t in report.theorems)


def plural(count: int, word: str) -> str:
    return f"{count:,} {word}{'' if count == 1 else 's'}"


def undecided_total(records: Iterable[NumericRecord]) -> int:
    return sum(r.undecided or 0 for r in records)


def _status_words(t: TheoremResult) -> str:
    if t.status == "proved":
        method = t.symbolic.method if t.symbolic else ""
        if method.startswith(EXACT_EVALUATION):
            return "proved by exact evaluation"
        # a claim kind's method may prove at stated sizes or for every value: it says which
        sized = "all sizes" in method or method.startswith(("sum normal form", "from "))
        return "proved for all sizes" if sized or not method else "proved"
    if t.status == "proved-bounded":
        bound = t.symbolic.max_size if t.symbolic and t.symbolic.max_size else "a bound"
        return f"proved for sizes ≤ {bound}"
    if t.status == "checked":
        if t.symbolic and t.symbolic.status == "lemmas-proved":
            return "lemmas proved; claim checked numerically"
        return "checked numerically only"
    if t.status == "unstable":
        return "holds; unstable in " + ", ".join(unstable_formats(t.numeric))
    if t.status == "inconsistent":
        return "INCONSISTENT: routes disagree"
    if t.status == "refuted" and t.denied:
        return "refuted, as the document says"
    if t.status == "failed":
        # a claim declared to hold fails only on a counterexample that stands (verdict.py)
        return ("FAILED: refuted, though declared to hold" if t.expect == "holds"
                else "FAILED: not refuted")
    return {"unchecked": "not checked", "refuted": "refuted", "error": "ERROR"}.get(
        t.status, t.status)


def status_counts(report: Report) -> list[tuple[str, int]]:
    counts = [(s, sum(t.status == s for t in report.theorems)) for s in STATUSES]
    return [(s, n) for s, n in counts if n]


@dataclass(frozen=True)
class Totals:
    theorems: int
    as_expected: int
    instances: int
    undecided: int
    proof_seconds: float
    numeric_seconds: float


def totals(report: Report) -> Totals:
    ts = report.theorems
    return Totals(
        theorems=len(ts),
        as_expected=sum(t.ok for t in ts),
        instances=sum(r.instances or 0 for t in ts for r in t.numeric),
        undecided=sum(undecided_total(t.numeric) for t in ts),
        proof_seconds=sum(t.symbolic.seconds for t in ts if t.symbolic),
        numeric_seconds=sum(r.seconds or 0.0 for t in ts for r in t.numeric),
    )


def environment_rows(report: Report) -> list[tuple[str, str]]:
    env = report.environment
    rows = [(name, env.get(name) or "not installed")
            for name in ("python", *VERSIONED_PACKAGES)]
    return rows + [("devices", ", ".join(env.get("devices") or []) or "none")]


def evidence(t: TheoremResult) -> list[NumericRecord]:
    """Numeric records in a stable reading order: backend, dtype, device, mode."""
    return sorted(t.numeric, key=lambda r: (r.backend, _dtype_order(r.dtype), r.device, r.mode))


# Record statuses whose reason a reader needs next to the table: why it did not simply pass.
EXPLAINED_STATUSES = ("error", "skipped", "not-decisive", "too-few", "inconsistent")


def explained(records: list[NumericRecord]) -> list[NumericRecord]:
    return [r for r in records if r.reason and (r.status in EXPLAINED_STATUSES
                                                or FINDING in r.reason
                                                or BACKEND_FINDING in r.reason
                                                or NOT_EVALUATED in r.reason)]


@dataclass(frozen=True)
class BackendFinding:
    """What one backend did in one format against the rounding model declared for it, and the
    theorems whose records saw it (their verdicts stand: the instances it touched were set
    aside as outside the model)."""

    backend: str
    dtype: str
    what: str
    theorems: tuple[str, ...]


def backend_findings(report: Report) -> list[BackendFinding]:
    """Every backend finding of the run, one per backend, format and what it did."""
    seen: dict[tuple[str, str, str], list[str]] = {}
    for t in report.theorems:
        for r in t.numeric:
            for what in _backend_sentences(r.reason or ""):
                names = seen.setdefault((r.backend, r.dtype, what), [])
                if t.name not in names:
                    names.append(t.name)
    return [BackendFinding(b, d, what, tuple(names)) for (b, d, what), names in seen.items()]


def _backend_sentences(reason: str) -> list[str]:
    """What each backend finding of a reason says the backend did: its text up to its first
    ";" (the rest counts the instances of this record)."""
    return [part.split(";")[0].strip() for part in reason.split(BACKEND_FINDING)[1:]]


def numeric_tally(records: list[NumericRecord]) -> str:
    """E.g. "14/16 passed, 2 not decisive": the records that ran, by outcome."""
    ran = [r for r in records if r.status != "skipped"]
    passed = sum(r.status == "passed" for r in ran)
    undecided = sum(r.status == "not-decisive" for r in ran)
    too_few = sum(r.status == "too-few" for r in ran)
    text = f"{passed}/{len(ran)} passed"
    text += f", {undecided} not decisive" if undecided else ""
    return text + (f", {too_few} with too few instances" if too_few else "")


def inconsistent(report: Report) -> list[TheoremResult]:
    """Theorems whose routes disagree: they head every report."""
    return [t for t in report.theorems if t.status == "inconsistent"]


def ground_truth_sentence(t: TheoremResult) -> str | None:
    """The worst float64 error against the 50-digit evaluation, over the records that made one."""
    measured = [(number(r.ground_truth_ulps), r) for r in t.numeric]
    found = [(ulps, r) for ulps, r in measured if ulps is not None]
    if not found:
        return None
    ulps, worst = max(found, key=lambda pair: pair[0])
    return (f"Against a 50-digit evaluation of the same statement on small instances, float64 "
            f"was at most {format_ulps(ulps)} ULPs off (worst of {len(found)}: "
            f"{configuration(worst)}).")


def _dtype_order(dtype: str) -> tuple[int, str]:
    order = ("float64", "float32", "float16", "bfloat16")
    return (order.index(dtype) if dtype in order else len(order), dtype)


def worst_bits(t: TheoremResult) -> float | None:
    measured = [number(r.max_error_bits) for r in t.numeric]
    bits = [b for b in measured if b is not None]
    return max(bits) if bits else None


def number(value: Measured) -> float | None:
    """A float from a record field that may be None or a JSON string such as "inf"."""
    if value is None:
        return None
    try:
        return float(value)
    except (TypeError, ValueError):
        return None


def format_number(value: Measured, spec: str = ".3g") -> str:
    """A measured number as a reader writes it: NaN, ∞ and −∞ where it is not finite (Python
    would print nan, inf: "infx" in a ratio), "—" where there is none."""
    x = number(value)
    if x is None:
        return "—"
    if math.isnan(x):
        return "NaN"
    if math.isinf(x):
        return "∞" if x > 0 else "−∞"
    return format(x, spec)


def format_ulps(value: Measured) -> str:
    ulps = number(value)
    return format_number(ulps, ".1f" if ulps is not None and 0 <= ulps < 1000 else ".3g")


def format_bits(value: Measured) -> str:
    return format_number(value, ".1f")


def format_seconds(value: Measured) -> str:
    seconds = number(value) or 0.0
    return f"{seconds:.2f} s" if seconds < 100 else f"{seconds:.0f} s"


def corrections(report: Report) -> dict[str, list[TheoremResult]]:
    """For each refuted claim's name, the theorems that declare they correct it."""
    fixes: dict[str, list[TheoremResult]] = {}
    for t in report.theorems:
        if t.corrects:
            fixes.setdefault(t.corrects, []).append(t)
    return fixes


def document_theorems(report: Report) -> list[TheoremResult]:
    """The theorems that state claims of the documents (not those of a user's directory)."""
    return [t for t in report.theorems if t.name not in _users_own(report) and t.source]


def _users_own(report: Report) -> set[str]:
    listed = report.run.get("user_theorems")  # theorems of a user's directory, not documents'
    return {n for n in listed if isinstance(n, str)} if isinstance(listed, list) else set()


def errata(report: Report) -> list[tuple[TheoremResult, list[TheoremResult]]]:
    """Every claim found false (refuted as expected, or a claim expected to hold that failed
    with a counterexample), with the theorems that correct it."""
    fixes = corrections(report)
    users_own = _users_own(report)
    found_false = [t for t in report.theorems if _found_false(t) and t.name not in users_own]
    return [(t, fixes.get(t.name, [])) for t in found_false]


def _found_false(t: TheoremResult) -> bool:
    """A claim of the documents found false (a statement they deny is not their claim)."""
    if t.denied:
        return False
    if t.status == "refuted":
        return True
    return t.status == "failed" and t.expect == "holds" and bool(counterexamples(t))


def counterexamples(t: TheoremResult) -> list[Shown]:
    """(where, values, replay command) for the exact counterexample and each float64 one."""
    found: list[Shown] = []
    if t.symbolic is not None and t.symbolic.counterexample:
        found.append(("exact, symbolic", t.symbolic.counterexample, None))
    for r in evidence(t):
        if r.counterexample_stands and r.counterexample:
            found.append((configuration(r), r.counterexample, r.replay))
    return found


def shown_counterexamples(t: TheoremResult) -> list[Shown]:
    """What a theorem's section shows: the exact counterexample and the first float64 one
    (with its replay command); the others repeat them on another backend."""
    found = counterexamples(t)
    exact = [c for c in found if c[2] is None][:1]
    numeric = [c for c in found if c[2] is not None][:1]
    return exact + numeric


def smallest_counterexample(t: TheoremResult) -> Shown | None:
    """The exact counterexample when there is one (it is at the smallest sizes), else the
    first float64 one."""
    found = counterexamples(t)
    return found[0] if found else None


def configuration(r: NumericRecord) -> str:
    return f"{r.backend} {r.dtype} {r.device} {r.mode}"


def shows_temperature_figure(t: TheoremResult, catalog: bool | None = None) -> bool:
    """Whether the §11.2 temperature figure is about ``t``: a theorem of the catalog stating a
    claim of that section (a theorem of a user's own, whatever its inputs or source, is not)."""
    if catalog is None:
        catalog = in_catalog(t)
    return catalog and t.source.startswith(TEMPERATURE_SECTION)


# -- where a theorem comes from: the catalog, or a user's own file -------------------------------


def user_theorems(report: Report) -> set[str] | None:
    """The names the run recorded as a user's own (``run.user_theorems``), or None where it
    recorded none (an older results file)."""
    listed = report.run.get("user_theorems")
    return {n for n in listed if isinstance(n, str)} if isinstance(listed, list) else None


def in_catalog(t: TheoremResult, report: Report | None = None) -> bool:
    """Whether ``t`` is a theorem of the built-in catalog: as its run recorded it where it did,
    else by its file, which may have been on another machine (a file of a ``theorems`` folder
    that the catalog also has)."""
    users = user_theorems(report) if report is not None else None
    if users is not None:
        return t.name not in users
    origin = t.origin
    if not origin or "\x00" in origin:
        return False
    path = PurePath(origin)
    try:
        if Path(origin).resolve().parent == CATALOG_DIR.resolve():
            return True
    except (OSError, ValueError, RuntimeError):
        return False
    return path.is_absolute() and path.parent.name == "theorems" and path.name in _catalog_files()


@cache
def _catalog_files() -> frozenset[str]:
    return frozenset(p.name for p in CATALOG_DIR.glob("*.py") if not p.name.startswith("_"))


def command_path(origin: str) -> str | None:
    """A theorem file as a command printed in a report names it: never with the absolute path
    of the machine that made the run. A relative path stays as it was given (relative to the
    directory the run was made in); an absolute one below the current directory becomes
    relative to it; any other is named by its folder and file (``my_theorems/claims.py``), to
    be run from the directory that holds that folder."""
    if not origin or origin == "<unknown>":
        return None
    path = PurePath(origin)
    if not path.is_absolute():
        return str(path)
    try:
        return str(Path(origin).resolve().relative_to(Path.cwd().resolve()))
    except (OSError, ValueError, RuntimeError):
        pass
    tail = path.parts[1:][-2:]
    return str(PurePath(*tail)) if tail else None


def reproduce_command(t: TheoremResult, catalog: bool | None = None) -> str:
    """The command that re-checks this theorem alone: a catalog theorem needs no file; a
    user's own names its file as ``command_path`` does (``catalog`` None: decided from its
    file by ``in_catalog``)."""
    if catalog is None:
        catalog = in_catalog(t)
    parts = ["attnproof", "prove", "--theorem", t.name]
    shown = None if catalog else command_path(t.origin)
    if shown:
        parts += ["--theorems", shown]
    return shlex.join(parts)


def portable_command(command: str, catalog: bool) -> str:
    """A recorded command (a counterexample's replay) as a report prints it: the file after
    ``--theorems`` dropped for a catalog theorem, else named as ``command_path`` names it, so
    that no absolute path of the machine that made the run is printed. A command that is not
    shell words is left as it is."""
    try:
        words = shlex.split(command)
    except ValueError:
        return command
    kept: list[str] = []
    rest = iter(words)
    for word in rest:
        value = word.partition("=")[2] if word.startswith("--theorems=") else None
        if word == "--theorems":
            value = next(rest, "")
        if value is None:
            kept.append(word)
            continue
        shown = None if catalog else command_path(value)
        if shown:
            kept += ["--theorems", shown]
    return command if kept == words else shlex.join(kept)


# -- topics: a page per theorem module of the catalog, one for a user's own files ---------------

USER_TOPIC = "your-theorems"
USER_TOPIC_TITLE = "Your theorems"
_UNSAFE_IN_PAGE_NAME = re.compile(r"[^A-Za-z0-9_]")
PAGE_NAME_LENGTH = 64


@dataclass(frozen=True)
class Topic:
    """The theorems of one catalog module (``key``: its name), or all of a user's own
    (``key``: ``USER_TOPIC``), in the report's order; ``files`` their files, for a user's."""

    key: str
    name: str  # the module's name, or USER_TOPIC_TITLE
    catalog: bool
    theorems: tuple[TheoremResult, ...]
    files: tuple[tuple[str, tuple[TheoremResult, ...]], ...] = ()

    @property
    def title(self) -> str:
        return f"{self.name} (theorems/{self.name}.py)" if self.catalog else self.name


def topics(report: Report) -> list[Topic]:
    """The report's theorems by topic: the catalog's modules in the order their theorems first
    come, then a user's own, grouped by their file. Each key is a safe file name, unique
    whatever the case (it names the topic's page)."""
    modules: dict[str, list[TheoremResult]] = {}
    own: dict[str, list[TheoremResult]] = {}
    for t in report.theorems:
        if in_catalog(t, report):
            modules.setdefault(PurePath(t.origin).stem or "other", []).append(t)
        else:
            own.setdefault(command_path(t.origin) or "(no file)", []).append(t)
    taken = {USER_TOPIC}
    found = []
    for module, members in modules.items():
        key = _page_name(module, taken)
        found.append(Topic(key, module, True, tuple(members)))
    if own:
        every_one = tuple(t for group in own.values() for t in group)
        files = tuple((path, tuple(group)) for path, group in own.items())
        found.append(Topic(USER_TOPIC, USER_TOPIC_TITLE, False, every_one, files))
    return found


def _page_name(name: str, taken: set[str]) -> str:
    base = _UNSAFE_IN_PAGE_NAME.sub("-", name)[:PAGE_NAME_LENGTH] or "topic"
    key, number = base, 1
    while key.lower() in taken:
        number += 1
        key = f"{base}-{number}"
    taken.add(key.lower())
    return key


def anchor(name: str) -> str:
    """GitHub's anchor for a heading whose text is ``name``."""
    kept = "".join(c for c in name.lower() if c.isalnum() or c in " -_")
    return kept.replace(" ", "-")


def counterexample_summary(value: object, limit: int = 200) -> str:
    """One line of plain text: sizes, then values, then the residual; cut at ``limit``."""
    if not isinstance(value, dict):
        return _cut(str(value), limit)
    parts = []
    for key, item in value.items():
        if key == "lhs_minus_rhs":
            parts.append(f"lhs − rhs = {item}")
        elif isinstance(item, dict):
            parts.extend(f"{name} = {_compact(v)}" for name, v in item.items())
        elif key in ("lhs", "rhs", "comparison"):
            parts.append(f"{key}: {_compact(item)}")
    return _cut("; ".join(parts) or str(value), limit)


def _compact(value: object) -> str:
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_compact(v) for v in value) + "]"
    if isinstance(value, float):
        return f"{value:.6g}"
    return str(value)


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def as_lines(value: object) -> str:
    """A counterexample as text: one line per top-level key, each value compact JSON."""
    if isinstance(value, str):
        return value
    if not isinstance(value, dict):
        return json.dumps(value, default=str)
    return "\n".join(f"{key}: {json.dumps(item, default=str)}" for key, item in value.items())


def device_differences(records: Sequence[NumericRecord]) -> list[str]:
    """Where a run spans several devices and one dtype's records came out differently, which
    device gave which (a float16 that overflows on one and not on another):
    ``float16: failed on numpy/cpu; passed on jax/cpu, jax/gpu``."""
    if len({r.device for r in records}) < 2:
        return []
    lines = []
    for dtype in dict.fromkeys(r.dtype for r in records):
        by_status: dict[str, list[str]] = {}
        for r in records:
            if r.dtype == dtype:
                by_status.setdefault(r.status, []).append(f"{r.backend}/{r.device}")
        if len(by_status) > 1:
            lines.append(f"{dtype}: " + "; ".join(
                f"{status} on {', '.join(dict.fromkeys(where))}"
                for status, where in by_status.items()))
    return lines

