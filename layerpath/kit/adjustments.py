"""The adjustments by name: what each is called, the amount a bare request means and
the range a slider offers. The words (engine/plan/adjust_words.py), the checks, the panel's
amount slider and the adjustment tool (tools/adjust.py) all read this table."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Adjustment:
    """One adjustment: its plain name, the amount a bare request means, and the range
    a slider offers (in the unit `unit` names)."""

    name: str
    default: float
    low: float
    high: float
    unit: str = ""


ADJUSTMENTS: dict[str, Adjustment] = {
    "exposure": Adjustment("Exposure", 0.5, -3.0, 3.0, "stops"),
    "contrast": Adjustment("Contrast", 0.35, -1.0, 1.0),
    "highlights": Adjustment("Highlights", -0.5, -1.0, 1.0),
    "shadows": Adjustment("Shadows", 0.5, -1.0, 1.0),
    "temperature": Adjustment("Temperature (warm +, cool -)", 0.35, -1.0, 1.0),
    "tint": Adjustment("Tint (magenta +, green -)", 0.3, -1.0, 1.0),
    "white_balance": Adjustment("Auto white balance", 1.0, 0.0, 1.0),
    "saturation": Adjustment("Saturation", 0.3, -1.0, 1.0),
    "vibrance": Adjustment("Vibrance", 0.4, -1.0, 1.0),
    "color": Adjustment("Colour boost", 0.5, 0.0, 1.0),
    "black_and_white": Adjustment("Black & white", 1.0, 0.0, 1.0),
    "curve": Adjustment("Tone curve (S +, matte -)", 0.5, -1.0, 1.0),
    "vignette": Adjustment("Vignette (darker edges +)", 0.5, -1.0, 1.0),
    "denoise": Adjustment("Noise reduction", 0.5, 0.0, 1.0),
    "sharpen": Adjustment("Sharpening", 0.5, 0.0, 2.0),
    "blur": Adjustment("Blur", 0.5, 0.0, 1.0),
    # a look of tools/data/looks.json ('sunset', 'teal and orange', 'watercolour'): its
    # amount is its opacity over the picture
    "look": Adjustment("Look", 0.8, 0.0, 1.0),
    # the colours of a reference picture (engine/plan/references.py), transferred in CIELAB:
    # its amount is the transfer's opacity
    "match": Adjustment("Colours matched", 0.8, 0.0, 1.0),
}
#: the sides a graduated adjustment starts from (full there, none at the far side)
SIDES = ("top", "bottom", "left", "right")
#: the toning colours black & white may take ('sepia', 'selenium' or any colour's name)
TONES = {"sepia": (112, 66, 20), "selenium": (90, 70, 110), "cyanotype": (30, 80, 140)}


def adjustment_ops() -> str:
    """The ops with their ranges, for a planner's prompt: 'exposure (-3..3 stops), ...'."""
    return ", ".join(
        f"{op} ({a.low:g}..{a.high:g}{' ' + a.unit if a.unit else ''})"
        for op, a in ADJUSTMENTS.items()
    )
