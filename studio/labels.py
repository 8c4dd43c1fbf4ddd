"""The label a teacher reads beside each linked setting's widget, by its key: what a warning about a link
names (a teacher knows "Learning rate", not ``lr_lr``). ``tests/test_link_labels.py`` checks each one
against the label the page draws."""

LABELS: dict[str, str] = {
    "cf_function": "Function",
    "cf_input": "Input x (comma-separated)",
    "cf_grad_output": "grad_output fed into backward",
    "tl_N": "N (batch)",
    "tl_D_in": "D_in",
    "tl_H": "H (hidden)",
    "tl_D_out": "D_out",
    "tl_lr": "Learning rate",
    "tl_steps": "Steps",
    "tl_activation": "ReLU implementation",
    "two_layer_speed": "Speed (steps per second)",
    "lr_n": "Points per class",
    "lr_mean": "Cluster mean (±)",
    "lr_bias": "Bias (shift of both)",
    "lr_lr": "Learning rate",
    "lr_momentum": "Momentum",
    "lr_iters": "Max iterations",
    "lr_every": "Draw every",
    "lr_stop": "Stop at accuracy >",
    "lr_forget": "Forget `optimizer.zero_grad()` (the tutorial's bug)",
    "logistic_speed": "Speed (iterations per second)",
    "xr_net": "Network",
    "xr_backward": "Run backward",
    "xr_fn": "Function",
    "xr_points": "Points to check",
    "xr_float64": "float64",
    "xr_zg_data": "Data",
    "pg_dataset": "Data",
    "pg_noise": "Noise",
    "pg_n": "Points per class",
    "pg_test": "Test fraction",
    "pg_data_seed": "Data seed (Regenerate)",
    "pg_x1": "X1",
    "pg_x2": "X2",
    "pg_x1sq": "X1²",
    "pg_x2sq": "X2²",
    "pg_x1x2": "X1X2",
    "pg_sinx1": "sin X1",
    "pg_sinx2": "sin X2",
    "pg_hidden": "Hidden layers (neurons in each)",
    "pg_layers": "Hidden layers",  # older links' pg_layers and pg_width, folded into pg_hidden
    "pg_width": "Neurons per layer",
    "pg_activation": "Activation",
    "pg_optimizer": "Optimizer",
    "pg_lr": "Learning rate",
    "pg_batch": "Batch size",
    "pg_l2": "L2 (weight decay)",
    "pg_l1": "L1",
    "pg_show_test": "Show test data",
    "pg_discretize": "Discretize output",
    "pg_slow": "Slow motion",
    "pg_speed": "Speed (steps per second)",
    "wf_challenge": "Challenge",
}


def label(key: str) -> str:
    """The widget's label for a setting's key; the key itself for a setting this table does not know."""
    return LABELS.get(key, key)
