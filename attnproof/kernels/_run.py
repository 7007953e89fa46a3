"""Run a kernel on one case and judge it: flash-attention's rule, per output, against the float64
truth, with the kernel's conventions observed rather than assumed."""

from __future__ import annotations

import dataclasses
import traceback
from dataclasses import dataclass, field

import numpy as np

from ._cases import Case, causal_keep, fully_masked_rows, instance, split_point
from ._declaration import Kernel, from_layout, layout_shape, normalized_layout, to_layout
from ._frameworks import Framework, numpy_dtype, rounded
from ._truth import Inputs, condition, reference, truth, truth_lse

# A kernel conforms when its worst absolute error is at most LIMIT times the plain reference's
# at its declared precision, plus a floor of FLOOR_ULPS ulps (flash-attention's tests: 2x, and
# an absolute floor of a few ulps). The floor is measured against the output's largest
# magnitude (the sum of its terms' absolute values), in ulps of the output's format plus ulps
# of the computing format times the softmax's condition (1 + the largest |score|): where the
# reference's arithmetic happens to follow the truth's (float64 against float64), its own
# error is 0 and only the floor tells rounding from a defect.
LIMIT = 2.0
FLOOR_ULPS = 4.0
TRACEBACK_FRAMES = 3
# a fully masked row is read as zeros or the mean of V when within this many ulps of it
CONVENTION_ULPS = 16.0
_TINY = np.finfo(np.float64).tiny
CONVENTION_WORDS = {"zeros": "returns zeros", "mean_v": "returns the mean of V",
                    "nan": "returns NaN", "other": "returns neither zeros, NaN nor the mean of V",
                    "upper_left": "aligned upper-left (query i keeps keys j ≤ i)",
                    "lower_right": "aligned lower-right (query i keeps j ≤ i + n_k − n_q)",
                    "-inf": "lse −∞", "+inf": "lse +∞", "finite": "a finite lse"}
LSE_WORDS = {"-inf": "returns −∞", "+inf": "returns +∞", "nan": "returns NaN",
             "finite": "returns finite values (or a mix)"}


@dataclass
class CaseResult:
    """``ratio`` is the worst error over the reference's (floor included): conforms <= LIMIT."""

    status: str  # pass | fail | undecided | raised | layout | declaration
    ratio: float | None = None
    output: str | None = None
    message: str = ""
    detail: dict = field(default_factory=dict)
    conventions: dict = field(default_factory=dict)

    @property
    def failed(self) -> bool:
        return self.status in ("fail", "raised", "layout", "declaration")


class LayoutMismatch(Exception):
    pass


def eps(dtype: str) -> float:
    import ml_dtypes

    return float(ml_dtypes.finfo(numpy_dtype(dtype)).eps)


def run_case(kernel: Kernel, fw: Framework, prop, case: Case, dtype: str,
             device: str = "cpu") -> CaseResult:
    compute = kernel.compute_for(dtype)
    outputs = prop.outputs(kernel)
    alignment = kernel.causal_alignment or "upper_left"
    if prop.kind == "alignment":
        alignment = "lower_right"  # zeroes the upstream gradient of rows either alignment masks
    x = _with_bias(kernel, instance(case, dtype, compute, alignment), case, dtype)
    x = dataclasses.replace(x, score_mod=kernel.modification(case.softcap))
    try:
        got = call(kernel, fw, x, case, dtype, device, outputs)
        if prop.kind == "split_kv":
            got = merged_halves(kernel, fw, x, case, dtype, device)
        if prop.kind == "merge":
            got = merged_by_kernel(kernel, fw, x, case, dtype, device)
    except LayoutMismatch as mismatch:
        return CaseResult("layout", message=str(mismatch))
    except Exception as error:  # the kernel's own failure is a finding, reported in full
        if prop.kind == "heads":
            mismatch = _heads_declared_wrongly(kernel, fw, case, dtype, device)
            if mismatch is not None:
                return CaseResult("declaration", message=f"{mismatch}\n{_raised(error)}")
        return CaseResult("raised", message=_raised(error))
    conventions = {}
    if prop.kind == "alignment":
        x, verdict = _alignment(kernel, x, got, dtype, compute, conventions)
        if verdict is not None:
            return verdict
    judged = _judge(kernel, x, got, dtype, compute, outputs, conventions)
    judged.conventions = conventions
    return judged


# -- calling the kernel --------------------------------------------------------------------------


def call(kernel: Kernel, fw: Framework, x: Inputs, case: Case, dtype: str, device: str,
         outputs) -> dict[str, np.ndarray]:
    """The kernel's outputs as canonical float64 arrays (out, lse, dq, dk, dv as asked)."""
    put = {a: _placed(fw, to_layout(x.passed(a), _letters(kernel, a)), dtype, device,
                      case.memory, "qkv".index(a), _letters(kernel, a))
           for a in "qkv"}
    keywords = _keywords(kernel, fw, x, case, dtype, device)
    forward = fw.bind(kernel.fn, keywords)

    result = forward(put["q"], put["k"], put["v"])
    out, lse = result if kernel.returns_lse else (result, None)
    b, h, n_q, _ = x.q.shape
    got = {"out": _read(fw, out, kernel, "out", (b, h, n_q, x.v.shape[3]))}
    if lse is not None:
        got["lse"] = _read(fw, lse, kernel, "lse", (b, h, n_q, 1))[..., 0]
    if set(outputs) & {"dq", "dk", "dv"}:
        g = fw.put(to_layout(x.g, _letters(kernel, "out")), dtype, device)
        if kernel.gradients == "autodiff":
            first = _first_of_pair if kernel.returns_lse else _itself
            grads = fw.gradients(kernel.fn, keywords, first)(put["q"], put["k"], put["v"], g)
        else:
            grads = kernel.gradients(put["q"], put["k"], put["v"], g, **keywords)
        for name, arg, like in zip(("dq", "dk", "dv"), "qkv", (x.q, x.k, x.v), strict=True):
            got[name] = _read(fw, grads[("dq", "dk", "dv").index(name)], kernel, arg, like.shape)
    return got


def _placed(fw: Framework, array: np.ndarray, dtype: str, device: str, memory: str | None,
            slot: int, letters: str):
    """``array`` (in the kernel's layout) as the kernel receives it: a packed array, or a view
    of other memory as ``memory`` says (slot 0, 1, 2 for q, k, v)."""
    if memory is None:
        return fw.put(array, dtype, device)
    if memory == "fused_qkv":  # the slot-th third of a projection's features
        n = array.shape[-1]
        fused = np.random.default_rng(slot).standard_normal((*array.shape[:-1], 3 * n))
        fused[..., slot * n:(slot + 1) * n] = array
        return fw.put(fused, dtype, device)[..., slot * n:(slot + 1) * n]
    stored = [letters.index("s"), *(i for i, c in enumerate(letters) if c != "s")]
    packed = fw.put(np.ascontiguousarray(np.transpose(array, stored)), dtype, device)
    return fw.permute(packed, [stored.index(i) for i in range(len(letters))])


def _first_of_pair(result):
    return result[0]


def _itself(result):
    return result


def _letters(kernel: Kernel, argument: str) -> str:
    if argument == "lse":
        return normalized_layout(kernel.lse_layout + "d")
    return normalized_layout(kernel.layout_of(argument))


def _keywords(kernel: Kernel, fw: Framework, x: Inputs, case: Case, dtype: str,
              device: str) -> dict:
    keywords = dict(kernel.keywords)
    if kernel.scale_argument is not None and case.scale is not None:
        keywords[kernel.scale_argument] = x.scale
    kind = _mask_kind(kernel, case)
    bias = (x.given or {}).get("bias")
    if case.causal_flag:
        keywords[kernel.causal_argument] = kernel.causal_value
    elif case.mask != "none" or (bias is not None and kind == "bias"):
        in_mask = bias if kind == "bias" else None
        keywords[kernel.mask_argument] = _mask(kernel, fw, x.keep, kind, in_mask,
                                               _mask_dtype(kernel, case, dtype), device)
    if bias is not None and kind != "bias":
        keywords[kernel.bias_argument] = fw.put(bias, dtype, device)
    if case.softcap is not None:
        keywords[kernel.softcap_argument] = case.softcap
    return keywords


def _mask_kind(kernel: Kernel, case: Case) -> str:
    return case.mask_kind or kernel.mask_kinds[0]


def _mask_dtype(kernel: Kernel, case: Case, dtype: str) -> str:
    if kernel.mask_dtype == "inputs":
        return dtype
    return kernel.mask_dtype or case.mask_dtype or dtype


def _mask(kernel: Kernel, fw: Framework, keep: np.ndarray, kind: str, bias, dtype: str,
          device: str):
    """The mask of ``kind``: the keep-mask itself, or -inf where it drops a key and the bias
    (or 0) where it keeps one."""
    if kind == "bool":
        return fw.put(keep, "bool", device)
    return fw.put(np.where(keep, 0.0 if bias is None else bias, -np.inf), dtype, device)


def _with_bias(kernel: Kernel, x: Inputs, case: Case, dtype: str) -> Inputs:
    """``x`` with its drawn bias rounded to the format the kernel receives it in, and the term
    the scores get from it by the kernel's scale rule."""
    drawn = (x.given or {}).get("bias")
    if drawn is None:
        return x
    kind = _mask_kind(kernel, case)
    passed = rounded(drawn, _mask_dtype(kernel, case, dtype) if kind == "bias" else dtype)
    added = passed * x.scale if kernel.bias_scaled else passed
    return dataclasses.replace(x, given={**x.given, "bias": passed}, bias=added)


def _read(fw: Framework, array, kernel: Kernel, argument: str, canonical) -> np.ndarray:
    value = fw.get(array)
    letters = _letters(kernel, argument)
    if argument == "lse" and value.ndim == len(letters) - 1:
        value = value[..., None]
    expected = layout_shape(tuple(canonical), letters)
    if value.shape != expected:
        raise LayoutMismatch(_layout_message(argument, kernel, letters, expected, value.shape,
                                             canonical))
    return from_layout(value, letters, tuple(canonical))


def _layout_message(argument, kernel, letters, expected, actual, canonical) -> str:
    import itertools

    readings = ["".join(p) for p in itertools.permutations(letters)
                if layout_shape(tuple(canonical), "".join(p)) == tuple(actual)]
    declared = kernel.lse_layout if argument == "lse" else kernel.layout_of(argument)
    guess = f", which reads as layout {' or '.join(map(repr, readings))}" if readings else ""
    return (f"{argument}: expected layout {declared!r}, shape {tuple(expected)}; got shape "
            f"{tuple(actual)}{guess}")


def _raised(error: BaseException) -> str:
    frames = traceback.extract_tb(error.__traceback__)[-TRACEBACK_FRAMES:]
    for frame in frames:
        frame.filename = _short_path(frame.filename)
    where = "".join(traceback.format_list(frames))
    return f"{type(error).__name__}: {error}\n{where}".rstrip()


def _short_path(path: str) -> str:
    """A frame's file relative to the working directory, or from its installed package on."""
    import os

    if "site-packages" + os.sep in path:
        return path.split("site-packages" + os.sep, 1)[1]
    relative = os.path.relpath(path)
    return path if relative.startswith("..") else relative


def merged_halves(kernel: Kernel, fw: Framework, x: Inputs, case: Case, dtype: str,
                  device: str) -> dict[str, np.ndarray]:
    """Out and lse of the keys split in two, each half run alone, merged by log-sum-exp."""
    (o1, l1), (o2, l2) = ((h["out"], h["lse"][..., None])
                          for h in _halves(kernel, fw, x, case, dtype, device))
    top = np.maximum(l1, l2)
    w1, w2 = np.exp(l1 - top), np.exp(l2 - top)
    return {"out": (w1 * o1 + w2 * o2) / (w1 + w2), "lse": (top + np.log(w1 + w2))[..., 0]}


def _halves(kernel, fw, x: Inputs, case: Case, dtype: str, device: str) -> list[dict]:
    split = split_point(case)
    return [call(kernel, fw, _keys(x, part), case, dtype, device, ("out",))
            for part in (slice(0, split), slice(split, None))]


def merged_by_kernel(kernel: Kernel, fw: Framework, x: Inputs, case: Case, dtype: str,
                     device: str) -> dict[str, np.ndarray]:
    """Out and lse of the keys split in two, each half run alone, merged by the kernel's own
    ``merge(o1, lse1, o2, lse2)``, which gets the halves as the kernel returned them."""
    arguments = []
    for half in _halves(kernel, fw, x, case, dtype, device):
        arguments.append(fw.put(to_layout(half["out"], _letters(kernel, "out")), dtype, device))
        arguments.append(fw.put(_lse_to_layout(kernel, half["lse"]), dtype, device))
    out, lse = kernel.merge(*arguments)
    b, h, n_q, _ = x.q.shape
    return {"out": _read(fw, out, kernel, "out", (b, h, n_q, x.v.shape[3])),
            "lse": _read(fw, lse, kernel, "lse", (b, h, n_q, 1))[..., 0]}


def _lse_to_layout(kernel: Kernel, lse: np.ndarray) -> np.ndarray:
    letters = _letters(kernel, "lse")
    return np.squeeze(to_layout(lse[..., None], letters), axis=letters.index("d"))


def _keys(x: Inputs, part: slice) -> Inputs:
    """``x`` with the keys in ``part`` only (axis 2 of K and V, the last of masks and biases)."""
    given = {a: array[..., part] if a == "bias" else array[:, :, part]
             for a, array in (x.given or {}).items()}
    return dataclasses.replace(x, k=x.k[:, :, part], v=x.v[:, :, part], keep=x.keep[..., part],
                               given=given or None,
                               bias=None if x.bias is None else x.bias[..., part])


# -- heads ---------------------------------------------------------------------------------------


def _heads_declared_wrongly(kernel: Kernel, fw: Framework, case: Case, dtype: str,
                            device: str) -> str | None:
    """Why a kernel that raised with shared K/V heads is declared wrongly, when it runs with
    another sharing: its head sharing is a declaration to fix, not a bug to report."""
    shared = f"{case.kv_heads} K/V head{'s' if case.kv_heads > 1 else ''} for {case.heads} " \
             "query heads"
    if case.kv_heads > 1 and _only_runs(kernel, fw, case, 1, dtype, device):
        return (f"declaration: raised with {shared} but runs with one K/V head: the kernel "
                "shares a single K/V head only (declare mqa=True, gqa=False)")
    if _only_runs(kernel, fw, case, case.heads, dtype, device):
        return (f"declaration: raised with {shared} but runs with as many K/V heads as query "
                "heads: the kernel shares no K/V head (declare gqa=False, mqa=False)")
    return None


def _only_runs(kernel: Kernel, fw: Framework, case: Case, kv_heads: int, dtype: str,
               device: str) -> bool:
    """Whether the kernel runs ``case`` with ``kv_heads`` K/V heads where it raises with the
    case's own, both at the case's sizes and at plain ones (4 of each, no mask): a kernel that
    raises at some shapes for other reasons is not read as sharing heads otherwise."""
    plain = dataclasses.replace(case, n_q=4, n_k=4, d_k=4, d_v=4, mask="none",
                                causal_flag=False)
    return all(_runs(kernel, fw, dataclasses.replace(c, kv_heads=kv_heads), dtype, device)
               for c in (case, plain)) and not _runs(kernel, fw, plain, dtype, device)


def _runs(kernel: Kernel, fw: Framework, case: Case, dtype: str, device: str) -> bool:
    x = instance(case, dtype, kernel.compute_for(dtype))
    try:
        call(kernel, fw, x, case, dtype, device, ("out",))
    except Exception:  # noqa: BLE001 -- any failure means this sharing does not run
        return False
    return True


# -- judging -------------------------------------------------------------------------------------


def _judge(kernel, x: Inputs, got, dtype, compute, outputs, conventions) -> CaseResult:
    masked_rows = fully_masked_rows(x.keep)
    if masked_rows.any():
        mismatch = _fully_masked(kernel, x, got["out"], masked_rows, dtype, compute, conventions)
        if mismatch is None and "lse" in got:
            mismatch = _fully_masked_lse(kernel, got["lse"], masked_rows, conventions)
        if mismatch is not None:
            return mismatch
        if conventions.get("fully_masked") == "nan":
            outputs = [o for o in outputs if o in ("out", "lse")]
    exact = truth(x, [o for o in outputs if o != "lse"])
    plain = reference(x, compute, dtype, outputs)
    if "lse" in outputs:
        exact["lse"] = truth_lse(x)
    floor = _floor_ulps(x, dtype, compute)
    with np.errstate(all="ignore"):
        return _worst_of(outputs, got, exact, plain, masked_rows, floor)


def _floor_ulps(x: Inputs, dtype: str, compute: str) -> dict[str, np.ndarray]:
    """Per output, per row: the floor in units of the row's magnitude."""
    return {name: FLOOR_ULPS * (eps(dtype) + eps(compute) * rows)
            for name, rows in condition(x).items()}


def _worst_of(outputs, got, exact, plain, masked_rows, floor) -> CaseResult:
    judged = [_compare(name, got[name], *exact[name], plain[name],
                       ~masked_rows if name in ("out", "lse") else None, floor[name])
              for name in outputs]
    decided = [j for j in judged if j.ratio is not None]
    return max(decided, key=lambda j: j.ratio) if decided else judged[0]


def _compare(name, value, exact, size, plain, rows, floor_ulps) -> CaseResult:
    """Flash-attention's rule on absolute errors: each row's error at most LIMIT times the
    plain reference's worst, plus the row's floor (``floor_ulps`` per row, times the row's
    magnitude: the sum of its terms' absolute values)."""
    if name == "lse":
        value, exact, plain, size = (a[..., None] for a in (value, exact, plain, size))
    kernel_rows, plain_rows = _row_errors(value, exact), _row_errors(plain, exact)
    floors = floor_ulps * np.max(size, axis=-1) + _TINY
    if rows is not None:
        kernel_rows, plain_rows, floors = kernel_rows[rows], plain_rows[rows], floors[rows]
    if kernel_rows.size == 0:
        return CaseResult("pass", 0.0, name)
    plain_worst = float(np.max(plain_rows))
    if not np.isfinite(plain_worst):
        return CaseResult("undecided", None, name, "the plain reference is not finite here")
    ratios = LIMIT * kernel_rows / (LIMIT * plain_worst + floors)
    worst_row = np.unravel_index(int(np.argmax(ratios)), ratios.shape)
    ratio, floor = float(ratios[worst_row]), float(floors[worst_row])
    kernel_error = float(kernel_rows[worst_row])
    index = worst_row if rows is None else tuple(np.argwhere(rows)[worst_row[0]])
    detail = {"output": name, "kernel_error": kernel_error, "reference_error": plain_worst,
              "floor": floor, **_entries(name, value, exact, index)}
    status = "pass" if ratio <= LIMIT else "fail"
    message = "" if status == "pass" else (
        f"{name}: error {kernel_error:.3g} in row {list(map(int, index))} vs the plain "
        f"reference's worst {plain_worst:.3g} (floor {floor:.3g}): {ratio:.3g}x, more than "
        f"{LIMIT:g}x")
    if status == "fail" and not np.all(np.isfinite(value)):
        message += "; the kernel returned non-finite values"
    return CaseResult(status, ratio, name, message, detail)


def _row_errors(value, exact):
    difference = np.abs(value - exact)
    difference = np.where(np.isfinite(value) | ~np.isfinite(exact), difference, np.inf)
    return np.max(np.nan_to_num(difference, nan=np.inf), axis=-1)


def _entries(name, value, exact, index) -> dict:
    index = tuple(int(i) for i in index)
    return {"at": {"output": name, "row (b, h, i)": list(index)},
            "kernel": _short(value[index]), "truth": _short(exact[index])}


def _short(row, keep: int = 8) -> list:
    return [float(f"{float(v):.6g}") for v in np.ravel(row)[:keep]]


# -- conventions ---------------------------------------------------------------------------------


def _fully_masked(kernel, x: Inputs, out, rows, dtype, compute, conventions) -> CaseResult | None:
    observed = classify_fully_masked(x, out, rows, max(eps(compute), eps(dtype)))
    conventions["fully_masked"] = observed
    declared = kernel.fully_masked
    if declared is not None and observed != declared:
        index = [int(i) for i in np.argwhere(rows)[0]]
        return CaseResult("fail", float("inf"), "out",
                          f"fully masked row: declared {CONVENTION_WORDS[declared]}, "
                          f"{CONVENTION_WORDS[observed]}",
                          {"at": {"output": "out", "row (b, h, i)": index},
                           "kernel": _short(out[tuple(index)])},
                          conventions)
    return None


def _fully_masked_lse(kernel, lse, rows, conventions) -> CaseResult | None:
    """A row with no kept key has no mass: its log-sum-exp is -inf, or by a declared
    convention +inf (flash-attention's, so that exp(s - lse) is 0) or NaN; never finite."""
    observed = classify_fully_masked_lse(lse[rows])
    conventions["fully_masked_lse"] = observed
    declared = kernel.fully_masked_lse
    if observed != "finite" and declared in (None, observed):
        return None
    wanted = "-inf, +inf or NaN" if declared is None else LSE_WORDS[declared]
    index = [int(i) for i in np.argwhere(rows)[0]]
    return CaseResult("fail", float("inf"), "lse",
                      f"lse of a fully masked row: expected {wanted}, the kernel "
                      f"{LSE_WORDS[observed]}",
                      {"at": {"output": "lse", "row (b, h, i)": index},
                       "kernel": _short(lse[tuple(index)]), "truth": [float("-inf")]},
                      conventions)


def classify_fully_masked_lse(values: np.ndarray) -> str:
    for name, test in (("-inf", np.isneginf), ("+inf", np.isposinf), ("nan", np.isnan)):
        if np.all(test(values)):
            return name
    return "finite"


def classify_fully_masked(x: Inputs, out, rows, epsilon: float) -> str:
    """What the kernel returns for its fully masked rows: zeros, mean_v, nan or other."""
    values = out[rows]
    if np.all(np.isnan(values)):
        return "nan"
    mean_v = np.broadcast_to(np.repeat(x.v, x.group, axis=1).mean(axis=2)[:, :, None],
                             out.shape)[rows]
    tolerance = CONVENTION_ULPS * epsilon * (np.max(np.abs(x.v)) + _TINY)
    distances = {"zeros": np.max(np.abs(values)), "mean_v": np.max(np.abs(values - mean_v))}
    best = min(distances, key=distances.get)
    return best if distances[best] <= tolerance else "other"


def _alignment(kernel, x: Inputs, got, dtype, compute, conventions):
    """Which causal alignment the kernel follows when n_q != n_k, from its output."""
    n_q, n_k = x.q.shape[2], x.k.shape[2]
    keeps = {a: np.broadcast_to(causal_keep(n_q, n_k, a), x.keep.shape) for a in
             ("upper_left", "lower_right")}
    common = ~fully_masked_rows(keeps["upper_left"]) & ~fully_masked_rows(keeps["lower_right"])
    floor = _floor_ulps(x, dtype, compute)
    ratios = {}
    for name, keep in keeps.items():
        xa = dataclasses.replace(x, keep=keep)
        exact = truth(xa, ("out",))["out"]
        plain = reference(xa, compute, dtype, ("out",))["out"]
        ratios[name] = _compare("out", got["out"], *exact, plain, common, floor["out"]).ratio
    fits = [a for a, r in ratios.items() if r is not None and r <= LIMIT]
    declared = kernel.causal_alignment
    if not fits:
        shown = ", ".join(f"{a} {r:.3g}x" for a, r in ratios.items())
        return x, CaseResult("fail", max(r or 0 for r in ratios.values()), "out",
                             f"causal with n_q != n_k matches neither alignment ({shown})")
    if len(fits) == len(ratios):  # too few rows differ between the alignments to tell them apart
        return x, CaseResult("pass", max(ratios.values()), "out")
    observed = fits[0]
    conventions["causal_alignment"] = observed
    if declared is not None and observed != declared:
        return x, CaseResult("fail", ratios[declared], "out",
                             f"causal: declared {CONVENTION_WORDS[declared]}, but "
                             f"{CONVENTION_WORDS[observed]}", conventions=conventions)
    return dataclasses.replace(x, keep=keeps[observed]), None
