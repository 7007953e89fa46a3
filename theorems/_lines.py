"""Every line of the three companion documents, each with what it claims and where that went.

The tutorial's claims are its numbered equations (``_pending.NOT_CLAIMS`` marks the rest); the
README, worked example 48 and the notebook make theirs in prose, code comments and checks, so
they are walked line by line instead. Each row covers a range of lines (1-based, inclusive) and
gives one of:

- ``theorems``: the cataloged theorems that state the claim (as written, and its correction when
  it is false);
- ``definition``: the lines define data, notation or a helper, and assert nothing to check;
- ``not_a_claim``: the lines make no mathematical claim (navigation, install commands, history,
  advice with no stated quantity, behaviour of software that is not the mathematics), and why;
- ``pending``: the claim as written in ``_pending.PENDING``, where the construct it needs is
  named.

A line may carry several rows, one per claim. ``quote``, where given, is text of those lines, so
a row cannot drift from the place it describes. tests/reports/test_coverage.py checks that every
non-blank line has a row, that every theorem named exists and every pending claim is listed, and
that every theorem citing a companion document appears here.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TypedDict

from ._dims import EXAMPLE_48, NOTEBOOK, README


class Row(TypedDict, total=False):
    """One row: its lines (first, last), its claim, and the one of ``theorems``,
    ``definition``, ``not_a_claim`` and ``pending`` that says where the claim went."""

    lines: tuple[int, int]
    claim: str
    theorems: tuple[str, ...]
    definition: bool
    not_a_claim: bool
    pending: str
    quote: str


def theorem(lines: tuple[int, int], claim: str, *names: str, quote: str = "") -> Row:
    return dict(lines=lines, claim=claim, theorems=names, quote=quote)


def definition(lines: tuple[int, int], what: str, quote: str = "") -> Row:
    return dict(lines=lines, claim=what, definition=True, quote=quote)


def not_a_claim(lines: tuple[int, int], why: str, quote: str = "") -> Row:
    return dict(lines=lines, claim=why, not_a_claim=True, quote=quote)


def pending(lines: tuple[int, int], claim: str, quote: str = "") -> Row:
    """``claim`` is the text of a ``_pending.PENDING`` entry."""
    return dict(lines=lines, claim=claim, pending=claim, quote=quote)


def status(row: Row) -> str:
    if row.get("theorems"):
        return "cataloged"
    if row.get("definition"):
        return "definition"
    if row.get("pending"):
        return "pending"
    return "not a claim"


FURNITURE = "page furniture: title, navigation, badges or a heading"

README_LINES = (
    not_a_claim((1, 9), FURNITURE),
    not_a_claim((11, 15), "describes the project and its approach; the structures it names are "
                "the claims of lines 17–20", quote="physicist's guide"),
    theorem((17, 17), "attention scores are bilinear forms with a metric tensor",
            "scaled_euclidean_metric_gives_attention_scores",
            "bilinear_form_linear_in_first_argument", "bilinear_form_linear_in_second_argument",
            quote="bilinear forms with a metric tensor"),
    theorem((18, 18), "softmax is a Gibbs distribution with temperature",
            "gibbs_distribution_is_softmax_at_temperature", quote="Gibbs distribution"),
    theorem((19, 19), "attention implements associative memory retrieval",
            "hopfield_update_is_attention", "hopfield_one_step_retrieval_error",
            quote="associative memory retrieval"),
    not_a_claim((20, 20), "names a topic (the tutorial's §5; its claims are cataloged from the "
                "tutorial, e.g. natural_gradient_reparameterization_invariant)",
                quote="parameter manifolds"),
    not_a_claim((22, 36), "table of contents of the documentation site"),
    not_a_claim((38, 56), "installation commands"),
    not_a_claim((58, 62), "heading and imports"),
    definition((64, 67), "the quick-start data Q (2 × 2), K and V (3 × 2)", quote="# 2 queries"),
    definition((69, 70), "calls attention on the data; nothing printed or asserted",
               quote="scaled_dot_product_attention(Q, K, V)"),
    definition((72, 73), "g = the scaled Euclidean metric at d = 2", quote="d=2"),
    theorem((74, 74), "bilinear_form_batch(Q, K, g) gives S^{ij} = Q^{ia} g_{ab} K^{jb}, the "
            "attention scores", "scaled_euclidean_metric_gives_attention_scores",
            quote="S^{ij} = Q^{ia} g_{ab} K^{jb}"),
    not_a_claim((76, 78), "heading and import"),
    definition((80, 81), "scores Q Kᵀ/√2", quote="jnp.sqrt(2)"),
    theorem((83, 90), "β = 10 is sharp (low temperature), β = 0.1 soft (high temperature); the "
            "entropy of A_sharp is lower ('Lower = more focused')",
            "readme_sharp_attention_has_lower_entropy", "entropy_derivative_in_inverse_temperature",
            quote="Lower = more focused"),
    not_a_claim((92, 94), "heading and import"),
    theorem((96, 98), "the manual gradients equal the derivatives (dL_dQ, dL_dK, dL_dV)",
            "attention_backward_dq", "attention_backward_dk", "attention_backward_dv",
            "printed_backward_dq_matches_autodiff", "printed_backward_dv_matches_autodiff",
            "printed_backward_dk_matches_autodiff",
            quote="Manual gradients match JAX autodiff"),
    not_a_claim((100, 105), "module list: what each module contains"),
    theorem((106, 106), "manual gradient derivations verified against autodiff",
            "attention_backward_dq", "attention_backward_dk", "attention_backward_dv",
            quote="verified against autodiff"),
    not_a_claim((107, 111), "module list: what each module contains"),
    not_a_claim((113, 115), "headings"),
    theorem((117, 121), "the matrix formula softmax(QKᵀ/√d_k)V and the index form "
            "O = AV, A = softmax(S), S = QKᵀ/√d_k are the same map",
            "attention_in_one_equation", "attention_rows_sum_to_one",
            quote="O^{ib} = A^{ij} V^{jb}"),
    theorem((123, 129), "the scores are the bilinear form with g_ab = δ_ab/√d_k",
            "scaled_euclidean_metric_gives_attention_scores", "euclidean_metric_is_dot_product",
            quote="scaled Euclidean metric"),
    theorem((131, 137), "attention weights are a Gibbs distribution at β = 1",
            "gibbs_distribution_is_softmax_at_temperature", quote="Gibbs distribution"),
    not_a_claim((139, 163), "development and test commands"),
    not_a_claim((165, 183), "backend support: behaviour of the attn-tensors package (device and "
                "backend selection), not mathematics", quote="Backend.MLX"),
    not_a_claim((185, 202), "the repository's file layout; '465+ tests' counts that "
                "repository's test suite, not a mathematical quantity", quote="465+ tests"),
    not_a_claim((204, 212), "references"),
    not_a_claim((214, 225), "citation"),
    not_a_claim((227, 259), FURNITURE),
)

EXAMPLE_48_LINES = (
    not_a_claim((1, 5), "metadata and heading"),
    not_a_claim((7, 7), "history (who introduced what, when) and hardware motivation",
                quote="Historical context"),
    theorem((7, 7), "attention is query-key-value retrieval via (two) matrix products",
            "attention_in_one_equation", quote="query-key-value retrieval via matrix products"),
    definition((9, 9), "scaled dot-product attention and the shapes of Q, K, V, QKᵀ, A and AV",
               quote="Scaled dot-product attention computes"),
    theorem((9, 9), "dividing by √d_k keeps the score variance from growing with dimension",
            "example48_scaled_score_variance", "example48_unscaled_score_variance",
            quote="prevents score variance from growing with dimension"),
    theorem((9, 9), "(growing scores) would saturate softmax",
            "example48_growing_scores_saturate_softmax",
            "example48_growing_scores_saturate_softmax_unique_maximum",
            quote="which would saturate softmax"),
    theorem((9, 9), "each row of A is a probability distribution over keys",
            "attention_rows_sum_to_one", "worked_example_48_weights_nonnegative",
            quote="each row is a probability distribution over keys"),
    not_a_claim((11, 11), "survey of where transformers are used and what heads learn "
                "(empirical, not mathematical); multi-head attention is defined on line 138",
                quote="Prevalence in ML"),
    theorem((13, 13), "every position can attend to every other position",
            "example48_every_key_gets_positive_weight",
            quote="Every position can attend to every other position"),
    not_a_claim((13, 13), "comparison with convolutions and RNNs and 'architecture of choice': "
                "motivation, no quantity stated", quote="Unlike convolution"),
    not_a_claim((15, 17), "the example's purpose and what it means to teach",
                quote="Build intuition"),
    theorem((17, 17), "softmax normalises row-wise to probability distributions, the output "
            "inherits the value dimension, and is a convex combination of values",
            "attention_rows_sum_to_one", "worked_example_48_weights_nonnegative",
            "worked_example_48_shapes", "worked_example_48_output_above_smallest_value",
            "worked_example_48_output_below_largest_value",
            quote="convex combination of values"),
    not_a_claim((19, 19), "heading"),
    theorem((21, 21), "the weights sum to 1", "worked_example_48_row_sums",
            quote="verify weights sum to 1"),
    not_a_claim((23, 23), "heading"),
    theorem((25, 25), "row-wise softmax yields row-stochastic weights",
            "attention_rows_sum_to_one", "worked_example_48_weights_nonnegative",
            quote="row-stochastic weights"),
    definition((25, 25), "O = softmax(QKᵀ/√d_k)V, a weighted sum of the values",
               quote="multiplying by $V$ forms weighted sums"),
    definition((27, 31), "notation: data matrix, column vectors, norm, inner product"),
    definition((32, 48), "the example's data and the forward pass in NumPy",
               quote="scores = Q @ K.T / np.sqrt(2)"),
    theorem((50, 50), "the printed row sums of A are 1", "worked_example_48_row_sums",
            quote="A row sums"),
    not_a_claim((51, 52), "prints O; the document shows no output, so no value is asserted"),
    definition((53, 57), "what the snippet computes, and the input shapes (n, m, d_k, d_v)",
               quote="single-head scaled dot-product attention"),
    theorem((58, 58), "scaling by 1/√d_k keeps softmax in a numerically friendly range",
            "example48_scaled_score_variance", quote="numerically friendly range"),
    theorem((59, 59), "each row of A is a probability distribution; the printed row sums "
            "equal 1", "attention_rows_sum_to_one", "worked_example_48_row_sums",
            quote="verify they equal 1"),
    theorem((60, 60), "O = A @ V has shape (n, d_v)", "worked_example_48_shapes",
            quote="with shape (n, d_v)"),
    not_a_claim((61, 64), "suggested variants (batching, masks, mapped on lines 82 and 130) and "
                "headings", quote="Variants"),
    not_a_claim((66, 66), "advice: declare shapes", quote="Shapes first"),
    theorem((67, 67), "softmax over keys (row-wise) makes rows sum to one",
            "attention_rows_sum_to_one", quote="rows sum to"),
    not_a_claim((68, 68), "advice on broadcasting", quote="Broadcasting"),
    theorem((69, 69), "log-sum-exp for softmax (stability)", "softmax_max_shift_prevents_overflow",
            "lse_at_least_max", quote="use log-sum-exp for softmax"),
    not_a_claim((69, 69), "advice: ε for divisions and logs; no quantity stated",
                quote="for divisions/logs"),
    theorem((69, 69), "a small diagonal εI (jitter) makes a PSD matrix fit for SPD solves: "
            "BᵀB + εI is positive definite (float32 sees ε only when ε ≳ 512·eps·‖BᵀB‖)",
            "example48_jitter_makes_gram_positive_definite", quote="(jitter) for SPD solves"),
    theorem((70, 70), "masked entries get zero weight (masks zero out excluded entries)",
            "masking_zero_weight", "masking_infinite_fill_zero_weight",
            "masking_finite_fill_zero_weight", quote="zero out excluded entries"),
    theorem((71, 71), "low precision under- or overflows where float32/float64 does not",
            "softmax_unshifted_overflows_above_12_in_float16",
            "softmax_unshifted_overflows_above_89",
            quote="to avoid under/overflow"),
    theorem((72, 72), "sanity check: row sums ≈ 1", "attention_rows_sum_to_one",
            quote="row-sum ≈ 1"),
    not_a_claim((72, 72), "advice: print shapes and residuals, assert finiteness",
                quote="Print shapes and residuals"),
    not_a_claim((74, 77), "headings and advice on dtypes, inverses and shapes: no quantity "
                "stated", quote="Avoid explicit inverses"),
    theorem((78, 78), "log-sum-exp for softmax (stability)", "softmax_max_shift_prevents_overflow",
            quote="Use log-sum-exp for softmax"),
    theorem((78, 78), "a small diagonal εI (jitter) makes a PSD matrix fit for SPD solves: "
            "BᵀB + εI is positive definite (float32 sees ε only when ε ≳ 512·eps·‖BᵀB‖)",
            "example48_jitter_makes_gram_positive_definite", quote="(jitter) for SPD solves"),
    theorem((78, 78), "prefer QR/SVD for ill-conditioned least squares: the normal equations "
            "square the condition number, κ(XᵀX) = κ(X)²",
            "example48_normal_equations_square_the_condition_number",
            quote="prefer QR/SVD for ill-conditioned least squares"),
    theorem((79, 79), "regularization (ridge) improves conditioning: κ(XᵀX + λI) ≤ κ(XᵀX), "
            "equal only when every singular value is the same",
            "example48_ridge_improves_conditioning", "example48_ridge_shifts_the_spectrum",
            quote="regularize (ridge)"),
    not_a_claim((79, 80), "advice: inspect cond(A), set seeds, print residuals",
                quote="Reproducibility"),
    theorem((81, 81), "matmul ~ O(n³)", "example48_matmul_cost_cubic", quote="Matmul ~ $O(n^3)$"),
    theorem((81, 81), "O(n²) for triangular solves/products: a solve and a product with one "
            "vector are Θ(n²); a product of two triangular matrices is Θ(n³)",
            "example48_triangular_solve_cost_quadratic",
            "example48_triangular_product_cost_quadratic",
            "example48_triangular_matrix_product_cost_cubic", quote="triangular solves/products"),
    not_a_claim((81, 81), "advice: vectorise, avoid large intermediates", quote="vectorization"),
    theorem((82, 82), "add −∞ before softmax, then verify rows sum to ~1 (false for a fully "
            "masked row; corrected)", "masking_rows_sum_to_one",
            "masking_rows_sum_to_one_unless_fully_masked", "masking_additive_infinity_zero_weight",
            quote="verify rows sum to ~1"),
    theorem((83, 83), "PSD check x.T @ A @ x > 0 (false for a PSD A with a kernel; corrected to "
            "≥ 0)", "psd_sanity_check_strict", "psd_sanity_check_strict_corrected",
            quote="x.T @ A @ x > 0"),
    not_a_claim((83, 83), "advice: compare solvers, check orthogonality of a given U, a residual "
                "tolerance to choose (~1e-12): nothing here states a property of attention or "
                "a value", quote="U.T @ U"),
    definition((84, 84), "step 1: the data", quote="Define query, key, value matrices"),
    theorem((85, 85), "scores are 2 × 3 with d_k = 2", "worked_example_48_shapes",
            quote="Compute scaled scores"),
    theorem((86, 86), "row-wise softmax gives each query a distribution over keys",
            "attention_rows_sum_to_one", "worked_example_48_weights_nonnegative",
            quote="probability distribution over keys"),
    theorem((87, 87), "A.sum(axis=1) equals [1., 1.]", "worked_example_48_row_sums",
            quote="equals [1., 1.]"),
    theorem((88, 89), "O is 2 × 2; O ∈ R^{n_q×d_v} in general", "worked_example_48_shapes",
            quote="Shape tracking"),
    theorem((90, 90), "axis=1 normalises over keys; axis=0 would be incorrect",
            "example48_column_softmax_sums_over_queries", "attention_rows_sum_to_one",
            quote="axis=0 would be incorrect"),
    theorem((91, 91), "1/√d_k prevents dot-product variance growth",
            "example48_scaled_score_variance", "example48_unscaled_score_variance",
            quote="prevents dot product variance growth"),
    theorem((91, 91), "critical for gradient stability (growing scores saturate softmax)",
            "example48_growing_scores_saturate_softmax",
            "example48_growing_scores_saturate_softmax_unique_maximum",
            quote="critical for gradient stability"),
    not_a_claim((92, 101), "pedagogy: learning goals, habits and exercise ideas; no quantity "
                "stated", quote="Learning goals"),
    not_a_claim((103, 104), "heading"),
    theorem((105, 105), "regularization (ridge) improves conditioning: κ(XᵀX + λI) ≤ κ(XᵀX)",
            "example48_ridge_improves_conditioning", "example48_ridge_shifts_the_spectrum",
            quote="regularization (ridge) improves conditioning"),
    not_a_claim((105, 109), "uses of linear-algebra tools (regression, PCA, factorizations, "
                "solvers, norms) named without a claim about attention or a stated quantity",
                quote="Decompose"),
    definition((110, 110), "the two stages: QKᵀ gives scores, AV retrieves",
               quote="Two-stage decomposition"),
    definition((111, 111), "the shape rule of a product: QKᵀ pairs query rows with key rows; QK "
               "is defined only when d_k = n_k (in the example, 2 ≠ 3)",
               quote="Shape alignment via transpose"),
    theorem((112, 112), "each row of A sums to 1; the weights are convex combination "
            "coefficients", "attention_rows_sum_to_one", "worked_example_48_weights_nonnegative",
            "worked_example_48_output_above_smallest_value",
            "worked_example_48_output_below_largest_value", quote="convex combination"),
    theorem((113, 113), "O inherits the value dimension d_v, not d_k", "worked_example_48_shapes",
            quote="Output dimension follows values"),
    theorem((114, 114), "dividing by √d_k keeps the score variance stable as dimension grows",
            "example48_scaled_score_variance", "example48_unscaled_score_variance",
            quote="keeps score variance stable"),
    theorem((114, 114), "avoiding vanishing gradients (saturation)",
            "example48_growing_scores_saturate_softmax",
            "example48_growing_scores_saturate_softmax_unique_maximum",
            quote="avoiding vanishing gradients"),
    theorem((115, 115), "higher query-key similarity gives higher attention weight",
            "weights_ratio_is_exponential_in_score_gap", quote="High query-key similarity"),
    theorem((116, 116), "reordering keys/values identically permutes the output (false: it "
            "leaves it unchanged; the queries' order is what the output follows)",
            "reordering_keys_values_permutes_output",
            "attention_invariant_to_reordering_keys_values",
            "attention_equivariant_to_reordering_queries", quote="Reordering keys/values"),
    theorem((116, 116), "order-independence requires positional encoding",
            "self_attention_is_permutation_equivariant", quote="requires positional encoding"),
    not_a_claim((117, 118), "hardware parallelism (no quantity stated) and a heading",
                quote="Efficient parallelization"),
    theorem((120, 120), "Q is 2 × 2, K is 3 × 2, scores 2 × 3", "worked_example_48_shapes",
            quote="Part 1"),
    definition((120, 120), "entry (i, j) of the scores is ⟨q_i, k_j⟩/√2; QK would not match "
               "shapes (the product rule, line 111)", quote="Transpose alignment"),
    theorem((120, 120), "without 1/√d_k scores grow with dimension",
            "example48_unscaled_score_variance", quote="scores grow with dimension"),
    theorem((120, 120), "pushing softmax into saturation (near-zero gradients)",
            "example48_growing_scores_saturate_softmax",
            "example48_growing_scores_saturate_softmax_unique_maximum",
            quote="near-zero gradients"),
    theorem((122, 122), "A is 2 × 3, each row a distribution: Σ_j A_ij = 1, A_ij ≥ 0",
            "worked_example_48_shapes", "attention_rows_sum_to_one",
            "worked_example_48_weights_nonnegative", quote="A_{ij} \\ge 0"),
    theorem((122, 122), "high scores give high weights",
            "weights_ratio_is_exponential_in_score_gap", quote="High scores"),
    theorem((122, 122), "softmax is a differentiable approximation to argmax",
            "softmax_approximates_argmax", "softmax_approximates_argmax_unique_maximum",
            "softmax_jacobian", quote="differentiable approximation to argmax"),
    theorem((122, 122), "subtracting the row max before exponentiating prevents overflow",
            "softmax_max_shift_prevents_overflow", "softmax_shift_invariance",
            quote="to prevent overflow"),
    theorem((124, 124), "O = AV is 2 × 2 and matches d_v, independent of d_k",
            "worked_example_48_shapes", quote="Part 3"),
    theorem((124, 124), "o_i is a convex combination of the values, in their convex hull",
            "worked_example_48_output_above_smallest_value",
            "worked_example_48_output_below_largest_value", "attention_rows_sum_to_one",
            quote="convex hull of value vectors"),
    theorem((124, 124), "extreme attention (one weight near 1) retrieves a single value",
            "worked_example_48_extreme_attention_retrieves_one_value",
            quote="retrieves a single value"),
    theorem((126, 126), "differentiable: gradients flow through the whole operation",
            "softmax_jacobian", "attention_backward_dq", "attention_backward_dk",
            "attention_backward_dv", quote="Differentiable"),
    not_a_claim((126, 126), "content-based addressing, parallelism, hardware efficiency and "
                "composability: motivation with no quantity stated", quote="Composable"),
    not_a_claim((128, 128), "which models use attention, interpretability: not mathematics",
                quote="Interpretability"),
    theorem((128, 128), "long-range dependencies in a single layer (every key weighted)",
            "example48_every_key_gets_positive_weight", quote="Long-range dependencies"),
    theorem((128, 128), "O(n²d) complexity for sequence length n",
            "attention_cost_quadratic_times_dimension", quote="O(n^2 d)"),
    definition((130, 130), "self-attention, cross-attention and multi-head attention",
               quote="Cross-attention"),
    theorem((130, 130), "masked positions get no weight", "masking_zero_weight",
            "masking_attention_backward_dv", quote="Masked attention"),
    theorem((130, 130), "a causal mask (scores −∞ for j > i) keeps future tokens from "
            "influencing past predictions", "causal_attention_output_is_a_running_sum",
            "causal_mask_gives_future_positions_zero_weight",
            quote="prevent future tokens from influencing"),
    theorem((130, 130), "sparse attention reduces O(n²) to O(n): a local window of w keys costs "
            "n·w·d (which pattern gives O(n log n) the text does not say)",
            "example48_local_window_attention_cost_linear",
            "example48_block_sparse_attention_cost_linear", quote="Sparse attention"),
    definition((132, 132), "the pipeline QKᵀ, softmax, AV as a composition of functions",
               quote="operator composition"),
    theorem((132, 132), "each output is a weighted combination in the span of the values "
            "('projection' used loosely: AV is not an idempotent map)",
            "worked_example_48_output_above_smallest_value",
            "worked_example_48_output_below_largest_value", quote="Projection interpretation"),
    theorem((132, 132), "cosine similarity normalises by norms for scale-invariance",
            "cosine_similarity_is_scale_invariant", "cosine_similarity_at_most_one",
            "cosine_similarity_at_least_minus_one", quote="cosine similarity normalizes"),
    theorem((132, 132), "softmax is a smooth relaxation of argmax with usable gradients",
            "softmax_approximates_argmax", "softmax_approximates_argmax_unique_maximum",
            "softmax_jacobian", quote="Softmax as differentiable max"),
    theorem((132, 132), "attention matrices often have low effective rank (made precise: the "
            "scores QKᵀ/√d_k have rank at most d_k; the softmax weights need not)",
            "example48_attention_scores_low_rank", quote="low effective rank"),
    theorem((134, 134), "computing QKᵀ in blocks saves memory; tiled computation reduces memory "
            "from O(n²) to O(n)", "tiled_attention_memory_linear",
            "standard_attention_memory_quadratic", "flash_attention_memory_linear",
            "online_softmax_blockwise", quote="in blocks"),
    theorem((134, 134), "subtracting the row max prevents overflow",
            "softmax_max_shift_prevents_overflow", "softmax_unshifted_overflows_above_89",
            quote="prevents overflow"),
    theorem((134, 134), "float16 forward, float32 softmax balances speed and stability",
            "softmax_unshifted_overflows_above_12_in_float16", quote="Mixed precision"),
    not_a_claim((134, 134), "gradient clipping in early training: an empirical observation about "
                "training, no quantity stated", quote="Gradient clipping"),
    definition((136, 136), "shape checks before QKᵀ; a batch dimension added in front",
               quote="Batch dimensions"),
    theorem((136, 136), "axis=1 normalises over keys; A.sum(axis=1) gives all ones; "
            "O.shape = (n_q, d_v)", "attention_rows_sum_to_one", "worked_example_48_row_sums",
            "worked_example_48_shapes", quote="all ones"),
    definition((138, 138), "self-attention layer Q = XW_Q, K = XW_K, V = XW_V; residual, layer "
               "normalisation, cross-attention", quote="Self-attention layer"),
    theorem((138, 138), "MultiHead(X) = Concat(head_1, …, head_h) W_O",
            "multi_head_is_concat_of_heads_times_w_o", "multi_head_output_is_concat_times_w_o",
            quote="Multi-head attention"),
    theorem((138, 138), "attention is permutation-equivariant, so positions must be added",
            "self_attention_is_permutation_equivariant", quote="permutation-equivariant"),
    not_a_claim((138, 138), "residual connections stabilise training of deep stacks; layer "
                "normalisation improves conditioning: training behaviour, with no matrix whose "
                "conditioning is meant named", quote="improve conditioning"),
    theorem((138, 138), "layer normalization controls activation magnitudes: the output's mean "
            "square is var/(var + ε) < 1 whatever the input's scale",
            "example48_layer_norm_controls_magnitudes", quote="control activation magnitudes"),
    theorem((138, 138), "FFN(x) = W₂(W₁x): as written one linear map",
            "example48_ffn_as_written_is_one_linear_map", quote="W_2 (W_1 x)"),
    theorem((138, 138), "the feedforward sublayer FFN(x) = W₂(W₁x) adds expressiveness (false: "
            "M = W₂W₁ is one linear map; with a ReLU between them no matrix gives it)",
            "example48_ffn_adds_expressiveness", "example48_ffn_with_relu_is_not_linear",
            quote="for additional expressiveness"),
    theorem((138, 138), "a causal mask (scores −∞ for j > i) keeps future tokens from "
            "influencing past predictions", "causal_attention_output_is_a_running_sum",
            "causal_mask_gives_future_positions_zero_weight", quote="mask future positions"),
    not_a_claim((140, 144), "history and applications", quote="History"),
    not_a_claim((146, 146), "heading"),
    theorem((147, 147), "attention is a sequence of linear maps (false: not linear in the "
            "queries; linear in the values)", "example48_attention_linear_in_queries",
            "example48_attention_linear_in_values", quote="Attention is a sequence of linear maps"),
    theorem((148, 148), "query-key scoring is batched inner products; cosine similarity is a "
            "normalised variant", "euclidean_metric_is_dot_product",
            "cosine_similarity_is_scale_invariant", quote="batched inner products"),
    theorem((149, 149), "each output row is a weighted combination in the span of the values "
            "(as line 132)", "worked_example_48_output_above_smallest_value",
            "worked_example_48_output_below_largest_value", quote="weighted projection"),
    not_a_claim((150, 150), "a technique named without a statement to check: low-rank "
                "approximation 'enables' sparse variants", quote="Chapter 10"),
    theorem((151, 151), "attention weights are soft assignments; hard assignments would solve a "
            "weighted least-squares problem (none is named; made precise, the soft weights "
            "already solve one: o_i minimises Σ_j A_ij‖o − v_j‖²)",
            "example48_output_solves_weighted_least_squares", quote="weighted least-squares"),
    not_a_claim((152, 152), "'pseudo-inverse-like updates' of adaptive span: no update rule "
                "given", quote="adaptive span"),
    theorem((153, 153), "ill-conditioned attention matrices concentrate weights (false: uniform "
            "attention has rank one and the most even rows)",
            "example48_uniform_attention_has_rank_one", "entropy_of_uniform_is_log_n",
            quote="Ill-conditioned attention matrices"),
    theorem((153, 153), "ill-conditioned attention matrices (dominated by few large singular "
            "values) concentrate weights on few keys (false: rank one with uniform rows; true "
            "the other way, weights on the same r keys have rank ≤ r)",
            "example48_ill_conditioned_attention_concentrates",
            "example48_weights_on_few_keys_have_low_rank", quote="concentrate weights on few keys"),
    theorem((154, 154), "sparse attention (local windows, block patterns) costs O(n) instead of "
            "O(n²)", "example48_local_window_attention_cost_linear",
            "example48_block_sparse_attention_cost_linear", quote="block patterns"),
    not_a_claim((155, 156), "where the pattern is used; no quantity stated",
                quote="flagship example"),
    not_a_claim((158, 158), FURNITURE),
)

# -- the notebook: 25 demos running 10 computations ----------------------------------------------

DEMO_BANNER = ("demo title, the line 'This demo turns one attention concept into a small checked "
               "computation', the cell label and its header call; the title before the dash "
               "names a topic the cell does not compute (e.g. 'Why scaling is needed' runs the "
               "entropy check), the part after it names the computation")
NO_OUTPUT = "prints values; the document shows no output, so no value is asserted"

# Each computation's rows, with lines counted from the demo's title line (offset 0).
COMPUTATIONS = {
    "scaled attention": (
        definition((4, 7), "Q = K = I₂, V = diag(10, 5), and the attention call"),
        not_a_claim((8, 9), NO_OUTPUT),
        theorem((10, 10), "attention rows sum to one", "notebook_attention_rows_sum_to_one",
                "attention_rows_sum_to_one", quote="attention rows sum to one"),
    ),
    "causal mask": (
        definition((4, 7), "T = 4, Q = K = I, V = 0…7, attention with causal_mask(4)"),
        not_a_claim((8, 8), NO_OUTPUT),
        theorem((9, 10), "the future attention mass is 0 (tol 1e-8)",
                "notebook_causal_mask_future_mass", "masking_finite_fill_zero_weight",
                quote="future attention mass"),
    ),
    "entropy": (
        definition((4, 7), "a sharp row [0.98, 0.01, 0.01], a diffuse row [1/3, 1/3, 1/3] and "
                   "their entropies"),
        not_a_claim((8, 9), NO_OUTPUT),
        theorem((10, 10), "diffuse attention has higher entropy",
                "notebook_diffuse_attention_has_higher_entropy", "entropy_at_most_log_n",
                quote="diffuse attention has higher entropy"),
    ),
    "multi-head shapes": (
        definition((4, 6), "X of shape (2, 5, 12), split into 3 heads, combined back"),
        theorem((7, 8), "the printed shapes: (2, 3, 5, 4) split, (2, 5, 12) combined",
                "notebook_multi_head_shapes", quote="Split shape"),
        theorem((9, 9), "combine restores model width", "notebook_multi_head_shapes",
                "notebook_combine_inverts_split_heads", quote="combine restores model width"),
    ),
    "score scaling": (
        definition((4, 8), "Gaussian Q, K (16 × 64, seed 1), raw = QKᵀ, scaled = raw/√64"),
        theorem((9, 10), "the printed standard deviations (≈ 8 raw, ≈ 1 scaled)",
                "notebook_score_scaling_seed_one", "dot_product_variance_is_d_k",
                "scaled_dot_product_variance_is_one", quote="Raw std"),
        theorem((11, 11), "scaling controls dot-product variance",
                "notebook_score_scaling_variance", quote="scaling controls dot-product variance"),
    ),
    "padding mask": (
        definition((4, 6), "scores [2, 1, 5] with the last key padded (−1e9)"),
        not_a_claim((7, 7), NO_OUTPUT),
        theorem((8, 8), "the padded key receives zero weight (tol 1e-8)",
                "notebook_padding_mask_weight", "notebook_padding_mask_weight_is_zero",
                quote="padded key receives zero weight"),
    ),
    "KV cache size": (
        definition((4, 6), "24 layers, 16 heads, T = 2048, 64 dims, 2 bytes; the byte count"),
        theorem((7, 7), "the printed KV cache MiB", "notebook_kv_cache_size",
                quote="KV cache MiB"),
        theorem((8, 8), "KV cache memory is positive and grows with T (the check shows only "
                "positivity)", "notebook_kv_cache_grows_linearly", "notebook_kv_cache_size",
                quote="grows with T"),
    ),
    "ALiBi bias": (
        definition((4, 4), "the ALiBi bias at T = 5, slope −0.25"),
        not_a_claim((5, 5), NO_OUTPUT),
        theorem((6, 6), "bias[4, 0] = −1.0: a linear distance penalty", "notebook_alibi_bias",
                quote="linear distance penalty"),
    ),
    "quadratic cost": (
        definition((4, 5), "T1 = 1024, T2 = 2048, ratio (T2/T1)²"),
        theorem((6, 7), "doubling context quadruples the score matrix (ratio 4)",
                "notebook_quadratic_cost_ratio", "notebook_score_matrix_entries",
                quote="doubling context quadruples score matrix"),
        theorem((8, 10), "the plot's score entries are T²", "notebook_score_matrix_entries",
                quote="Ts**2"),
        not_a_claim((11, 17), "plot labels and display"),
    ),
    "FlashAttention invariant": (
        definition((4, 6), "T = 128, full = T·T, tiled = 4·(T//4)·T"),
        theorem((7, 9), "tiling covers the same attention pairs (at T = 128; as a formula in T "
                "false when 4 does not divide T, corrected)", "notebook_tiling_covers_all_pairs",
                "notebook_tile_count_formula", "notebook_tile_count_formula_corrected",
                quote="tiling can compute exact same attention pairs"),
        theorem((10, 10), "FlashAttention does not change the attention formula",
                "online_softmax_blockwise", "online_softmax_merge",
                quote="not the attention formula"),
        theorem((10, 10), "FlashAttention changes memory movement: slow-memory traffic "
                "Θ(nd + n²) for standard attention, Θ(n²d²/M) tiled", "standard_attention_io",
                "flash_attention_io", quote="changes memory movement"),
    ),
}

# (demo number, line of its title, computation): the notebook runs the ten computations in
# demos 1–10, again in 11–20 and the first five once more in 21–25.
DEMOS = (
    (1, 89, "scaled attention"), (2, 100, "causal mask"), (3, 111, "entropy"),
    (4, 122, "multi-head shapes"), (5, 132, "score scaling"), (6, 144, "padding mask"),
    (7, 153, "KV cache size"), (8, 162, "ALiBi bias"), (9, 169, "quadratic cost"),
    (10, 187, "FlashAttention invariant"), (11, 198, "scaled attention"),
    (12, 209, "causal mask"), (13, 220, "entropy"), (14, 231, "multi-head shapes"),
    (15, 241, "score scaling"), (16, 253, "padding mask"), (17, 262, "KV cache size"),
    (18, 271, "ALiBi bias"), (19, 278, "quadratic cost"), (20, 296, "FlashAttention invariant"),
    (21, 307, "scaled attention"), (22, 318, "causal mask"), (23, 329, "entropy"),
    (24, 340, "multi-head shapes"), (25, 350, "score scaling"),
)


def _demo_rows(number: int, title_line: int, computation: str) -> tuple[Row, ...]:
    banner = not_a_claim((title_line, title_line + 3), DEMO_BANNER, quote=f"Demo {number}:")
    shifted: list[Row] = []
    for row in COMPUTATIONS[computation]:
        first, last = row["lines"]
        shifted.append({**row, "lines": (title_line + first, title_line + last)})
    return (banner, *shifted)


NOTEBOOK_LINES = (
    not_a_claim((1, 3), "title and conversion note"),
    not_a_claim((4, 5), "heading and the notebook's list of what it checks; each check is "
                "mapped at its demo", quote="KV-cache cost"),
    not_a_claim((6, 47), "plot setup, colours, random seed and the banner helper"),
    definition((48, 57), "check_true and check_close: a check passes when the condition holds, "
               "or when |value − target| ≤ tol (1e-8 unless given)", quote="def check_close"),
    theorem((58, 62), "stable_softmax subtracts the row max: the same softmax, without "
            "overflow", "softmax_shift_invariance", "softmax_max_shift_prevents_overflow",
            quote="def stable_softmax"),
    definition((63, 76), "attention(), causal_mask() (fill −1e9) and attention_entropy() (weights "
               "clipped at 1e-12)", quote="def causal_mask"),
    theorem((77, 83), "split_heads gives head h the features h·D/H … (h+1)·D/H − 1, and "
            "combine_heads undoes it", "notebook_head_h_holds_features_h_d_to_h_d_plus_d",
            "notebook_combine_inverts_split_heads", quote="def split_heads"),
    definition((84, 87), "alibi_bias: slope · max(i − j, 0)", quote="def alibi_bias"),
    not_a_claim((88, 88), "prints a message"),
    *(row for demo in DEMOS for row in _demo_rows(*demo)),
)

LINES = {README: README_LINES, EXAMPLE_48: EXAMPLE_48_LINES, NOTEBOOK: NOTEBOOK_LINES}


def lines_without_a_row(rows: Iterable[Row], text: str) -> list[int]:
    """The non-blank lines of ``text`` (1-based) that no row covers."""
    covered = {n for row in rows for n in range(row["lines"][0], row["lines"][1] + 1)}
    return [n for n, line in enumerate(text.splitlines(), 1) if line.strip() and n not in covered]


def quoted_text(row: Row, text: str) -> str:
    """The lines a row covers, joined."""
    first, last = row["lines"]
    return "\n".join(text.splitlines()[first - 1:last])
