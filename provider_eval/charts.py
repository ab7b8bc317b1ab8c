"""Charts for the HTML report: Vega-Lite specs built with altair, rendered offline to inline SVG."""
import altair as alt
import pandas as pd
import vl_convert as vlc

from provider_eval import chart_cache

FONT = "DejaVu Sans, Helvetica, Arial, sans-serif"
WIDTH = 560


def to_svg(chart: alt.TopLevelMixin) -> str:
    """Render a chart to an SVG element (no script, no web font, no network)."""
    spec = chart.configure(font=FONT).configure_view(stroke=None).to_json()
    return chart_cache.svg(spec, _render)


def _render(spec: str) -> str:
    """vl-convert's SVG of a Vega-Lite spec, without the XML prolog (it sits inline in HTML)."""
    svg = vlc.vegalite_to_svg(spec)
    return svg[svg.index("<svg"):]


def cost_axis(unit: str, per_million: bool) -> tuple[str, str]:
    """The cost column to plot and its axis title: per million units for tokens, else per unit."""
    if per_million:
        return "cost_per_million_units_usd", f"USD per million {unit.replace('_', ' ')}"
    return "cost_per_unit_usd", f"USD per completed {unit}"


def cost_bars(frame: pd.DataFrame, unit: str, per_million: bool = False, color: str = "#2f6f9f") -> alt.Chart:
    """Horizontal bars: cost per completed unit (or per million tokens) by configuration, cheapest on top."""
    column, title = cost_axis(unit, per_million)
    base = alt.Chart(frame).encode(
        x=alt.X(f"{column}:Q", title=title),
        y=alt.Y("configuration:N", sort=alt.EncodingSortField("rank"), title=None,
                axis=alt.Axis(labelLimit=360, labelFontSize=11)),
        tooltip=["configuration", "offer_id", column, "total_cost_usd", "hours_billed"],
    )
    bars = base.mark_bar(color=color)
    values = base.mark_text(align="left", dx=4, fontSize=11).encode(
        text=alt.Text(f"{column}:Q", format="$,.4f" if per_million else "$,.2f"))
    return (bars + values).properties(width=WIDTH - 140, height=alt.Step(26))


def cost_vs_time(frame: pd.DataFrame, unit: str, x_title: str, per_million: bool = False) -> alt.LayerChart:
    """Scatter of cost per unit against time, with the Pareto front drawn as a step line."""
    column, title = cost_axis(unit, per_million)
    base = alt.Chart(frame)
    points = base.mark_point(filled=True, size=80).encode(
        x=alt.X("x_value:Q", title=x_title, scale=alt.Scale(zero=False, padding=16)),
        y=alt.Y(f"{column}:Q", title=title, scale=alt.Scale(zero=False, padding=16)),
        color=alt.Color("front:N", title=None, legend=alt.Legend(orient="bottom"),
                        scale=alt.Scale(domain=["on the Pareto front", "dominated"],
                                        range=["#c0392b", "#95a5a6"])),
        tooltip=["configuration", "offer_id", "x_value", column],
    )
    front = base.transform_filter(alt.datum.front == "on the Pareto front").mark_line(
        interpolate="step-after", color="#c0392b", strokeDash=[4, 3]).encode(
        x="x_value:Q", y=f"{column}:Q", order="x_value:Q")
    labels = base.mark_text(align="left", dx=7, dy=-7, fontSize=10).encode(
        x="x_value:Q", y=f"{column}:Q", text="label:N" if "label" in frame else "configuration:N")
    return (front + points + labels).properties(width=WIDTH, height=260)


def memory_fit_heatmap(frame: pd.DataFrame) -> alt.LayerChart:
    """GPU model × workload: does it fit, and on how few GPUs."""
    base = alt.Chart(frame).encode(
        x=alt.X("workload_id:N", title="workload", axis=alt.Axis(labelAngle=-30, labelLimit=200)),
        y=alt.Y("gpu_model:N", title="GPU model"),
    )
    cells = base.mark_rect(stroke="white").encode(
        color=alt.Color("verdict:N", title="memory fit",
                        scale=alt.Scale(domain=["fits on 1 GPU", "fits on several GPUs", "does not fit"],
                                        range=["#2e8b57", "#e0a800", "#c0392b"])),
        tooltip=["workload_id", "gpu_model", "verdict", "min_gpus"],
    )
    text = base.mark_text(fontSize=11, color="black").encode(text="label:N")
    return (cells + text).properties(width=alt.Step(90), height=alt.Step(28))


def price_history(frame: pd.DataFrame, gpu_model: str) -> alt.LayerChart:
    """Observed USD per GPU-hour over time, one line per offer and billing option."""
    base = alt.Chart(frame).encode(
        x=alt.X("observed_at:T", title="observed at (UTC)", scale=alt.Scale(padding=16),
                axis=alt.Axis(format="%Y-%m-%d", labelAngle=-30)),
        y=alt.Y("usd_per_gpu_hour:Q", title=f"USD per {gpu_model} GPU-hour", scale=alt.Scale(zero=True)),
        color=alt.Color("series:N", title="offer · billing", legend=alt.Legend(labelLimit=320)),
        tooltip=["series", "observed_at:T", "usd_per_gpu_hour"],
    )
    return (base.mark_line() + base.mark_point(filled=True, size=50)).properties(width=WIDTH - 120, height=200)
