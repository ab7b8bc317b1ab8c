"""Labels for the cost-vs-time chart's points that do not overlap one another."""
import pandas as pd

from provider_eval import charts

# The cost-vs-time chart's label geometry (charts.cost_vs_time: 10 px text, 7 px right of and above its point).
LABEL_CHAR_PX, LABEL_HEIGHT_PX, LABEL_DX_PX, CHART_HEIGHT_PX = 6.2, 12, 7, 260


def chart_labels(points: pd.DataFrame, column: str, width_px: float = charts.WIDTH) -> tuple[list[str], int]:
    """One label per point that does not overlap another: points at the same spot share one label
    ("A (+2 more here)"); a label whose box would cross a kept one is left out and counted on the one
    it would cross ("B (+3 nearby)"). Returns the labels (empty where left out) and how many were left out."""
    xs, ys = points["x_value"].astype(float), points[column].astype(float)
    span_x, span_y = (xs.max() - xs.min()) or 1.0, (ys.max() - ys.min()) or 1.0
    px = [(x - xs.min()) / span_x * width_px for x in xs]
    py = [(ys.max() - y) / span_y * CHART_HEIGHT_PX for y in ys]
    same: dict[tuple, list[int]] = {}
    for i, key in enumerate(zip(xs.round(9), ys.round(12))):
        same.setdefault(key, []).append(i)
    labels, kept, owners, nearby, left_out = [""] * len(points), [], [], {}, 0

    def box_of(i: int, text: str) -> tuple:
        return (px[i] + LABEL_DX_PX, py[i] - LABEL_HEIGHT_PX - 1, px[i] + LABEL_DX_PX + LABEL_CHAR_PX * len(text), py[i] - 1)

    def crosses(box: tuple, other: tuple) -> bool:
        return box[0] < other[2] and other[0] < box[2] and box[1] < other[3] and other[1] < box[3]

    for group in same.values():
        first = group[0]
        text = str(points["configuration"].iloc[first])
        if len(group) > 1:
            text += f" (+{len(group) - 1} more here)"
        box = box_of(first, text)
        blocker = next((k for k, other in enumerate(kept) if crosses(box, other)), None)
        if blocker is not None:
            left_out += 1
            nearby[blocker] = nearby.get(blocker, 0) + len(group)
            continue
        kept.append(box)
        owners.append(first)
        labels[first] = text
    # A label that hid others says how many: where the longer text still crosses no other label.
    for k, count in nearby.items():
        longer = f"{labels[owners[k]]} (+{count} nearby)"
        box = box_of(owners[k], longer)
        if not any(crosses(box, other) for j, other in enumerate(kept) if j != k):
            labels[owners[k]], kept[k] = longer, box
    return labels, left_out
