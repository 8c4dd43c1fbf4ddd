"""Figure builders for the classification playground: decision surface, points, loss and accuracy."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from .figures import CLASS_COLORS, FONT, _payload, _play_pause, _slider, thin
from .playground import PlaygroundSnapshot

SURFACE = [[0, CLASS_COLORS[0]], [0.5, "#f7f7f7"], [1, CLASS_COLORS[1]]]
LIVE_WINDOW = 8  # a surface is grid*grid numbers: send only the newest few states
REPLAY_FRAMES = 60


def _layout(extent, steps_axis: int) -> dict:
    x0, x1, y0, y1 = extent
    return {
        "font": FONT, "margin": {"l": 50, "r": 55, "t": 80, "b": 50},
        "plot_bgcolor": "rgba(0,0,0,0)", "paper_bgcolor": "rgba(0,0,0,0)",  # the live surface shows through
        "xaxis": {"domain": [0, 0.5], "range": [x0, x1], "title": {"text": "x₀"}, "zeroline": False},
        "yaxis": {"range": [y0, y1], "title": {"text": "x₁"}, "zeroline": False},
        "xaxis2": {"domain": [0.62, 1], "anchor": "y2", "range": [0, max(steps_axis, 1)], "title": {"text": "step"}},
        "yaxis2": {"anchor": "x2", "title": {"text": "BCE loss"}, "range": [0, 1]},
        "yaxis3": {"anchor": "x2", "overlaying": "y2", "side": "right", "range": [0, 1.02], "tickformat": ".0%",
                   "tickvals": [0, 0.25, 0.5, 0.75, 1], "title": {"text": "test accuracy"}, "showgrid": False},
        "legend": {"orientation": "h", "y": 1.02, "yanchor": "bottom", "x": 0},
    }


SURFACE_RGB = [[214, 39, 40], [247, 247, 247], [31, 119, 180]]  # CLASS_COLORS at 0 and 1, white at 0.5


def _points(train, test) -> list[dict]:
    traces = []
    for (x, y), kind, symbol in ((train, "train", "circle"), (test, "test", "circle-open")):
        for c in (0, 1):
            traces.append({"type": "scatter", "mode": "markers", "name": f"{kind} class {c}",
                           "x": x[y == c, 0].tolist(), "y": x[y == c, 1].tolist(),
                           "marker": {"color": CLASS_COLORS[c], "size": 7, "symbol": symbol,
                                      "line": {"width": 1.5 if kind == "test" else 0.5, "color": "white"
                                               if kind == "train" else CLASS_COLORS[c]}}})
    return traces


def _curves() -> list[dict]:
    return [
        {"type": "scatter", "mode": "lines", "name": "train loss", "xaxis": "x2", "yaxis": "y2",
         "line": {"color": "#ff7f0e", "width": 3}},
        {"type": "scatter", "mode": "lines", "name": "test loss", "xaxis": "x2", "yaxis": "y2",
         "line": {"color": "#ff7f0e", "width": 3, "dash": "dot"}},
        {"type": "scatter", "mode": "lines", "name": "test accuracy", "xaxis": "x2", "yaxis": "y3",
         "line": {"color": "#9467bd", "width": 3}},
    ]


def _base(extent, grid: int, train, test) -> list[dict]:
    x0, x1, y0, y1 = extent
    traces = [{"type": "heatmap", "x": np.linspace(x0, x1, grid).tolist(), "y": np.linspace(y0, y1, grid).tolist(),
               "z": [], "zmin": 0, "zmax": 1, "colorscale": SURFACE, "opacity": 0.75, "showscale": False,
               "name": "P(class 1)", "hovertemplate": "P(class 1) = %{z:.2f}<extra></extra>"}]
    return traces + _points(train, test) + _curves()


def caption(s: PlaygroundSnapshot) -> str:
    return (f"Step {s.step:,}   train loss {s.train_loss:.3f}   test loss {s.test_loss:.3f}   "
            f"test accuracy {s.test_accuracy:.1%}")


def metrics(s: PlaygroundSnapshot) -> list[list[str]]:
    return [["step", f"{s.step:,}"], ["train loss", f"{s.train_loss:.4f}"], ["test loss", f"{s.test_loss:.4f}"],
            ["train accuracy", f"{s.train_accuracy:.1%}"], ["test accuracy", f"{s.test_accuracy:.1%}"]]


def playground_live_payload(snaps: Sequence[PlaygroundSnapshot], extent, grid: int, train, test, *, run_id: str,
                            status: str, status_text: str, steps_axis: int) -> dict:
    """Decision surface under the train (filled) and test (hollow) points, loss and accuracy beside.
    The surface travels as a grid per state; the browser draws it on a canvas under the plot area."""
    good = [s for s in snaps if not s.diverged]
    layout = _layout(extent, steps_axis)
    top = max((max(s.train_loss, s.test_loss) for s in good), default=1.0)
    layout["yaxis2"]["range"] = [0, max(1.0, round(top + 0.05, 1))]
    steps = [s.step for s in good]
    curves = {4: {"x": steps, "y": [s.train_loss for s in good]}, 5: {"x": steps, "y": [s.test_loss for s in good]},
              6: {"x": steps, "y": [s.test_accuracy for s in good]}}
    states = [{"seq": s.step, "step": s.step, "traces": {}, "surface": s.surface, "caption": caption(s),
               "metrics": metrics(s)} for s in good[-LIVE_WINDOW:]]
    return _payload(run_id, status, status_text, layout, _points(train, test) + _curves(), curves, states,
                    height=480, empty_caption="Press Play to train.", window=LIVE_WINDOW, max_behind=LIVE_WINDOW,
                    surface={"colors": SURFACE_RGB})


def playground_replay_figure(snaps: Sequence[PlaygroundSnapshot], extent, grid: int, train, test):
    """The recorded run as an animation; heatmap frames need redraw, so at most REPLAY_FRAMES of them."""
    import plotly.graph_objects as go

    good = [s for s in snaps if not s.diverged]
    layout = _layout(extent, max((s.step for s in good), default=1))
    fig = go.Figure(data=_base(extent, grid, train, test), layout=layout)
    frames = []
    for s in thin(good, REPLAY_FRAMES):
        upto = [t for t in good if t.step <= s.step]
        st = [t.step for t in upto]
        frames.append(go.Frame(name=str(s.step), traces=[0, 5, 6, 7], layout={"title": {"text": caption(s)}}, data=[
            go.Heatmap(z=s.surface), go.Scatter(x=st, y=[t.train_loss for t in upto]),
            go.Scatter(x=st, y=[t.test_loss for t in upto]), go.Scatter(x=st, y=[t.test_accuracy for t in upto])]))
    fig.frames = frames
    if frames:
        last = good[-1]
        fig.data[0].z = last.surface
        for i, key in ((5, "train_loss"), (6, "test_loss"), (7, "test_accuracy")):
            fig.data[i].update(x=[t.step for t in good], y=[getattr(t, key) for t in good])
        fig.update_layout(title={"text": caption(last), "font": {"size": 15}})
    play = _play_pause()
    for button in play["buttons"]:
        button["args"][1]["frame"]["redraw"] = True
    slider = _slider([f.name for f in frames])
    for step in slider["steps"]:
        step["args"][1]["frame"]["redraw"] = True
    slider["currentvalue"]["prefix"] = "step "
    fig.update_layout(margin={"t": 90, "b": 150}, height=620, updatemenus=[play], sliders=[slider])
    return fig
