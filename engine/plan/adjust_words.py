"""The words photographers use for adjustments: 'brighten', 'warmer', 'black and
white', 'lift the shadows', 'blur the face a little', 'add a vignette', 'reduce the
noise', 'increase the exposure by 1 stop', 'make the sky bluer'. One clause becomes one
photo_adjustment (the whole picture) or region_adjustment (inside the region it names:
'the face', 'the sky', 'the person on the left') with the adjustment's op and amount.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Any

from layerpath.engine.plan.modifier_words import split_modifiers
from layerpath.engine.types import Subtask, SubtaskKind
from layerpath.kit.adjustments import ADJUSTMENTS

K = SubtaskKind
_UP = r"(?:increase|raise|boost|up|bump(?:\s+up)?|pump(?:\s+up)?|add|more|enhance|higher|push|crank(?:\s+up)?|turn up|improve|strengthen|intensify|lift|fill(?:\s+in)?|open up)"
_DOWN = r"(?:decrease|reduce|lower|less|drop|cut|tone down|turn down|pull back|bring down|soften|weaken|minimi[sz]e|tame)"
_COLOURS = "blue|green|red|yellow|orange|purple|pink|teal|cyan|magenta|gold|golden"


@dataclass(frozen=True)
class Phrase:
    """Words that ask for an adjustment: the op and the direction they ask for."""

    pattern: re.Pattern[str]
    op: str
    sign: float = 1.0
    extra: dict[str, Any] = field(default_factory=dict)


def _p(pattern: str, op: str, sign: float = 1.0, **extra: Any) -> Phrase:
    return Phrase(re.compile(pattern, re.I), op, sign, extra)


#: a reference picture's placeholder (engine/plan/references.py rewrites 'ref' to '@ref'); a
#: bare word after 'the colours of' names one too (one not given is then said so)
_REF = r"(?:the\s+|my\s+|that\s+)?@(?P<ref>[A-Za-z][\w-]*)"
_NAMED = _REF.replace("@", "@?")

#: tried in order: the more specific first
PHRASES: tuple[Phrase, ...] = (
    # the colours of a reference picture: 'match the colours of @ref', 'make it look
    # like @ref', 'grade it like @ref'
    _p(
        r"(?:\b(?:match(?:ing)?|copy(?:ing)?|borrow|take|use|apply|give\s+(?:it|the\s+"
        r"(?:photo|picture|image))|with|in)\s+)?(?:the\s+)?(?:same\s+)?(?:colou?rs|"
        r"colou?r\s+grad(?:e|ing)|palette)\s+(?:of|from)\s+" + _NAMED,
        "match",
    ),
    _p(
        r"(?:\b(?:match(?:ing)?|copy(?:ing)?|borrow|take|use|apply|give\s+(?:it|the\s+"
        r"(?:photo|picture|image))|with|in)\s+)?(?:the\s+)?(?:same\s+)?(?:colou?rs?|"
        r"colou?r\s+grad(?:e|ing)|grad(?:e|ing)|look|tones?|palette|mood|style|feel)\s+"
        r"(?:of|from|as|in|like)\s+" + _REF,
        "match",
    ),
    _p(
        r"\b(?:colou?r[\s-]*)?(?:grade|match)\s+(?:it\s+|the\s+(?:photo|picture|image)\s+)?"
        r"(?:to\s+|with\s+|like\s+)?" + _REF,
        "match",
    ),
    _p(r"\b(?:look(?:s|ing)?\s+)?like\s+" + _REF, "match"),
    # black & white, toning
    _p(
        r"\b(?:sepia|vintage sepia)\b(?:\s+tone[sd]?|\s+look|\s+effect)?",
        "black_and_white",
        tone="sepia",
    ),
    _p(r"\b(?:selenium|cyanotype)\b(?:\s+tone[sd]?)?", "black_and_white", tone="selenium"),
    _p(
        r"\bgo\s+mono\b|\bmono\b(?!\s+look)|"
        r"\b(?:black[\s-]*(?:and|&|n)[\s-]*white|b\s*&\s*w|b/w|gr[ae]y\s*scale|monochrome|mono(?:chrome)?\s+look|"
        r"remove (?:all )?(?:the )?colou?rs?|drain (?:all )?(?:the )?colou?rs?|desaturate (?:it )?(?:completely|fully|entirely))\b",
        "black_and_white",
    ),
    # white balance, tint
    _p(
        r"\b(?:white[\s-]*balance|wb|colou?r cast|(?:yellow|blue|orange|green|magenta) cast|"
        r"neutrali[sz]e (?:the )?colou?rs?|correct (?:the )?colou?rs?|fix (?:the )?colou?rs?)\b",
        "white_balance",
    ),
    _p(r"\bmore magenta\b|\bmagenta tint\b", "tint", 1.0),
    _p(r"\bmore green(?: tint)?\b|\bgreen tint\b", "tint", -1.0),
    # temperature
    _p(
        r"\bwarm(?:er|en|ing)?\b(?:\s+(?:it\s+)?up)?|\b(?:more|add|some|extra)\s+(?:some\s+)?warmth\b|\bgolden(?:\s+hour)?\s+(?:tones?|look)\b",
        "temperature",
    ),
    _p(
        r"\bcool(?:er|ing)?\b(?:\s+(?:it\s+)?down)?|\bcold(?:er)?\b|\bless warm(?:th)?\b",
        "temperature",
        -1.0,
    ),
    # the slider by its name: up unless a lowering word says down ('lower the temperature')
    _p(r"\b(?:colou?r\s+)?temperature\b", "temperature"),
    # colour towards a hue: 'make the sky bluer'
    _p(
        r"\b(?:bluer|greener|redder|yellower|more (?:" + _COLOURS + r"))\b|"
        r"\b(?:green|blue)(?=\s+(?:it|them|the\s+[a-z]+)\s+up\b)",  # ('green it up')
        "color",
    ),
    # a thing lowered or raised by stops: its exposure ('knock the background down a stop')
    _p(r"\b(?:lower|darken|drop|knock|pull|burn(?:\s+in)?)\b(?=.*\bstops?\b)", "exposure", -1.0),
    _p(r"\bburn\s+in\b", "exposure", -1.0),
    # saturation, vibrance
    _p(
        r"\bdesaturate\b|\bless saturat\w*|\b"
        + _DOWN
        + r"\b.*\bsaturation\b|\bmute\w*\b.*\bcolou?rs?\b|\bcolou?rs? (?:more )?muted\b|\bwashed[\s-]out look\b",
        "saturation",
        -1.0,
    ),
    _p(
        r"\bvibran(?:ce|t)\b|\bcolou?rs?\b.*\bpop\b|\bpop\b.*\bcolou?rs?\b|\bmore colou?rful\b|\bmore vivid\b|\bvivid\b|"
        r"\bmake\s+(?:it|them|the\s+(?:photo|picture|image|shot))\s+pop\b",
        "vibrance",
    ),
    _p(r"\bsaturat\w*\b|\bricher colou?rs?\b|\bcolou?rs? richer\b", "saturation"),
    # highlights, shadows
    _p(
        r"\b(?:recover|rescue|save)\b.*\bhighlights?\b|\b"
        + _DOWN
        + r"\b.*\bhighlights?\b|\bdarken\b.*\bhighlights?\b|\bblown(?:[\s-]out)? highlights?\b",
        "highlights",
        -1.0,
    ),
    _p(r"\b(?:brighten|" + _UP + r")\b.*\bhighlights?\b", "highlights"),
    _p(
        r"\b(?:lift|open(?:\s+up)?|recover|brighten|lighten|" + _UP + r")\b.*\bshadows?\b",
        "shadows",
    ),
    _p(r"\b(?:crush|deepen|darken|" + _DOWN + r")\b.*\bshadows?\b", "shadows", -1.0),
    # tone curve
    _p(r"\bs[\s-]?curve\b|\btone curve\b|\bcurves?\b", "curve"),
    _p(r"\bmatte\b|\bfaded?\b(?:\s+(?:film\s+)?look)?|\bfilm look\b", "curve", -1.0),
    # vignette
    _p(
        r"\b(?:remove|get rid of|lighten|brighten|fix)\b.*\b(?:vignett\w*|corners|edges)\b",
        "vignette",
        -1.0,
    ),
    _p(
        r"\bvignett\w*\b|\bdarken\b.*\b(?:corners|edges)\b|\bdark(?:er)? (?:corners|edges)\b",
        "vignette",
    ),
    # noise, sharpening, blur
    _p(
        r"\bde-?nois\w*\b|\b(?:remove|reduce|clean(?:\s+up)?|get rid of|less|lower|cut|fix|smooth(?:\s+out)?|tame|suppress)\b.*\b(?:noise|grain|noisy|grainy)\b|\bnoise reduction\b|\bless (?:noisy|grainy)\b",
        "denoise",
    ),
    _p(
        r"\bsharpen\w*\b|\bcrisper\b|\bmore crisp\b|\bsharper\b|\bcrisp\s+(?:it|them|the\s+\w+\s+)?\s*up\b",
        "sharpen",
    ),
    # (anonymising: twice the default blur)
    _p(
        r"\b(?:blur\s+out|blur(?=\s+(?:it|them|(?:the|their|his|her|these|those)\s+[a-z' ]+?)\s+out\b)|anonymi[sz]e|"
        r"obscure|pixelate|censor)\b",
        "blur",
        2.0,
    ),
    _p(
        r"(?<![a-z])(?:blur(?:red|ry)?|defocus\w*|bokeh|out of focus|soften|"
        r"smooth(?:en)?(?=\s+(?:out\s+)?(?:the|her|his|their|my|it|them|skin)\b)(?!\s+(?:out\s+)?(?:the\s+|some\s+)?(?:noise|grain)))\b",
        "blur",
    ),
    # contrast
    _p(
        r"\b"
        + _DOWN
        + r"\b.*\bcontrast\b|\bflat(?:ter|ten)\b|\bless contrast\w*\b|\blow contrast\b",
        "contrast",
        -1.0,
    ),
    _p(r"\bcontrast\w*\b|\bpunch(?:y|ier)?\b", "contrast"),
    # exposure, brightness
    _p(
        r"\b"
        + _DOWN
        + r"\b.*\b(?:exposure|brightness)\b|\bdarken\w*\b|\bdarker\b|\bunderexpose\b|\btoo bright\b|\boverexposed\b",
        "exposure",
        -1.0,
    ),
    _p(
        r"[+-]?\d+(?:\.\d+)?\s*(?:ev|stops?)\b|\bopen\s+(?:it|the\s+\w+)\s+up\b|"
        r"\b(?:exposure|brightness)\b|\bbrighten\w*\b|\blighten\w*\b|\bbrighter\b|\blighter\b|\btoo dark\b|\bunderexposed\b",
        "exposure",
    ),
    # a thing lowered or raised as a whole, no adjustment named ('pull the sky down'):
    # its exposure (last: a named adjustment is found first)
    _p(
        r"\b(?:lower|darken|knock down|pull down|bring down)\b(?=\s+(?:the|her|his|their|its)\s+"
        r"(?!exposure|brightness|contrast|saturation|vibrance|warmth|temperature|highlights|"
        r"shadows|noise|sharpness|clarity|blacks|whites|tint|colou?rs?)[a-z])",
        "exposure",
        -1.0,
    ),
)

#: words that name the whole picture, not a region of it
WHOLE = {"image", "photo", "photograph", "picture", "pic", "it", "everything", "shot", "frame",
         "whole", "entire", "overall", "all", "scene", "this", "one", "them", "pictures", "photos",
         "thing", "rest"}  # fmt: skip
_FILLER = {
    "make", "makes", "made", "look", "looks", "looking", "a", "an", "the", "of", "on", "in", "to",
    "by", "at", "with", "and", "some", "its", "my", "that", "effect", "more", "up", "down",
    "bit", "little", "please", "add", "apply", "give", "get", "set", "turn", "tone", "tones",
    "toned", "color", "colors", "colour", "colours", "level", "levels", "amount", "way", "much",
    "slightly", "slight", "touch", "tad", "lot", "lots", "very", "really", "strongly", "heavily",
    "subtly", "gently", "somewhat", "mildly", "lightly", "significantly", "dramatically",
    "considerably", "can", "you", "could", "would", "i", "want", "like", "need", "just", "too",
    "so", "is", "be", "should", "let", "lets", "us", "stronger", "weaker", "strong", "weak",
    "nice", "nicely", "bunch", "for", "from", "into", "as", "if", "bring", "out", "over",
    "stop", "stops", "ev", "percent", "pixels", "px", "pixel", "degrees", "only", "area",
    "region", "part", "parts", "inside", "within", "around", "behind", "than", "now",
    "strength", "filter", "mode", "version", "copy", "keep", "natural", "naturally",
    "cast", "remove", "fix", "correct", "reduce", "increase", "decrease", "boost", "raise",
    "lower", "less", "enhance", "do", "there", "no", "not", "convert", "change", "switch",
    "transform", "render", "go", "use", "style", "recolor", "recolour", "recolored", "recoloured",
    "bump", "crank", "push", "higher", "improve", "strengthen", "intensify", "drop", "weaken",
    "minimise", "minimize", "tame", "pull", "back", "auto", "automatic", "automatically",
    "it's", "image's", "photo's", "picture's", "are", "was", "am", "seems", "rid", "dial",
    "put", "place", "throw", "slap", "pop", "wants", "needs",
    # the adjustment's own nouns: 'brighten the exposure' is no region called exposure
    "exposure", "brightness", "saturation", "vibrance", "contrast", "warmth", "temperature",
    "clarity", "sharpness", "blur", "toning", "finish", "lift", "pump", "extra", "fill",
    "strip", "else", "half", "edit", "taken", "shot", "were", "dialled", "dialed",
    "her", "his", "their", "our", "your",
}  # fmt: skip
_SOFTER = r"\b(?:slight(?:ly)?|a (?:little )?bit|a little|a touch|a tad|a smidge(?:n)?|a hair|subtl[ey]|gentl[ey]|somewhat|mild(?:ly)?|lightly|a light\b|barely|just a bit|marginally)\b"
_STRONGER = r"\b(?:much|a lot|lots|loads|tons|heaps|strong(?:ly)?|heav(?:y|ily)|very|really|way|significantly|dramatic(?:ally)?|considerabl[ey]|hugely|extremely|massively)\b"
_POSITION_WORDS = {"left", "right", "top", "bottom", "center", "centre", "middle", "largest",
                   "smallest", "biggest", "corner", "side", "far", "edge"}  # fmt: skip
#: regions that are a tonal range or the frame, not a thing: they choose the op instead
_OP_REGIONS = {"shadows": "shadows", "shadow": "shadows", "highlights": "highlights",
               "highlight": "highlights", "corners": "vignette", "edges": "vignette"}  # fmt: skip


#: stops said in words
_STOP_WORDS = {"half a stop": 0.5, "a third of a stop": 0.33, "a quarter of a stop": 0.25,
               "a full stop": 1.0, "one stop": 1.0, "a stop": 1.0, "two stops": 2.0}  # fmt: skip


def _number(text: str) -> tuple[float, str] | None:
    """The first number the words give and its unit ('%', 'stops', 'px', '')."""
    for words, stops in _STOP_WORDS.items():
        if re.search(rf"\b{words}\b", text):
            return stops, "stops"
    found = re.search(
        r"([+-]?\d+(?:\.\d+)?)\s*(%|percent\b|(?:f-?)?stops?\b|ev\b|px\b|pixels?\b)?", text
    )
    if not found:
        return None
    unit = (found.group(2) or "").lower()
    unit = {"percent": "%", "ev": "stops", "pixel": "px", "pixels": "px"}.get(unit, unit)
    if unit.endswith("stop") or unit.endswith("stops"):
        unit = "stops"
    return float(found.group(1)), unit


def amount_of(text: str, op: str, sign: float) -> tuple[float, dict[str, Any], bool]:
    """The amount the words ask for (clipped to the op's range), any extra parameter
    they give (a blur's radius in pixels), and whether the words gave a strength."""
    spec = ADJUSTMENTS[op]
    extra: dict[str, Any] = {}
    base = abs(spec.default)
    given = True
    number = _number(text)
    if number is not None:
        value, unit = number
        if unit == "px" and op == "blur":
            extra["radius"] = value
            value = base
        elif op == "exposure" and unit == "%":
            value = math.log2(1 + abs(value) / 100)
        elif op == "exposure":
            value = abs(value)  # stops
        elif unit == "%" or value > 1:
            value = abs(value) / 100
        else:
            value = abs(value)
        if number[0] < 0:
            sign = -sign if sign > 0 else sign
    elif re.search(_SOFTER, text):
        value = base * 0.5
    elif re.search(_STRONGER, text):
        value = base * 1.8
    else:
        value, given = base, False
    amount = sign * value if spec.low < 0 else abs(sign) * value
    return max(spec.low, min(spec.high, round(amount, 3))), extra, given


def region_of(text: str) -> tuple[str | None, str | None]:
    """The region the words name, and a position among several: ('person', 'left');
    (None, None) for the whole picture."""
    words = re.findall(r"[a-z][a-z'-]*", text.lower())
    position = [w for w in words if w in {"left", "right", "top", "bottom", "center", "centre",
                                          "middle", "largest", "smallest", "biggest"}]  # fmt: skip
    named = _named_words(words)
    kept = [
        w
        for i, w in enumerate(words)
        if w not in _FILLER and w not in _POSITION_WORDS and i in named and not w.endswith("-")
    ]  # fmt: skip  ('hand-' of 'hand-painted')
    if not kept or all(w in WHOLE for w in kept):
        return None, None
    kept = [w for w in kept if w not in WHOLE]
    place = " ".join(position).replace("centre", "center").replace("biggest", "largest")
    return _as_said(words, kept), place or None


#: words that make what follows a thing the words name ('the sky', 'her face')
_DEFINITE = {"the", "this", "that", "these", "those", "my", "his", "her", "their", "our",
             "your", "its", "each", "every", "all"}  # fmt: skip
#: things named bare, without 'the' ('blur background', 'sky only')
_BARE_REGIONS = {"sky", "background", "foreground", "face", "faces", "skin", "hair", "eyes",
                 "subject", "person", "people", "water", "clouds", "trees", "grass"}  # fmt: skip


def _named_words(words: list[str]) -> set[int]:
    """The places of the words that may name a region: the verb's object ('blur licence
    plates', 'brighten the lamp') and what a determiner or a preposition introduces ('her
    face', 'saturation of the flowers', 'out of the background'); not what follows an
    indefinite article, a conjunction or a verb of seeming ('a smidge', 'a studio shot',
    'but only subtly', 'look hand-painted': how, not where)."""
    named: set[int] = set()
    inside = True  # (the words at the start are the verb's object: the verb is gone)
    for index, word in enumerate(words):
        if word in _DEFINITE or word in _PLACES:
            inside = True
        elif word in _HOW:
            inside = False
        if inside or word in _BARE_REGIONS:
            named.add(index)
    return named


#: words after which a region is named again
_PLACES = {"of", "on", "in", "to", "from", "around", "behind", "across", "over", "under"}
#: words after which what follows says how, not where
_HOW = {"a", "an", "some", "by", "with", "using", "and", "but", "than", "about", "look", "looks",
        "looking", "feel", "feels", "seem", "seems", "like", "only", "until", "so", "because"}  # fmt: skip


#: words that tie a thing to where it is ('the people in the background')
_WHERE = {"in", "on", "at", "behind", "near", "by", "under", "above", "of"}


def _as_said(words: list[str], kept: list[str]) -> str:
    """The kept words as one phrase: where two are joined by where one is ('people in
    the background'), that joint stays; otherwise the kept words."""
    if len(kept) < 2:
        return " ".join(kept)
    first, last = words.index(kept[0]), len(words) - 1 - words[::-1].index(kept[-1])
    span = words[first : last + 1]
    between = [w for w in span if w not in kept]
    if (
        between
        and set(between) <= _WHERE | {"the", "a", "an", "its", "their", "his", "her"}
        and (set(between) & _WHERE)
        and [w for w in span if w in kept] == kept
    ):
        return " ".join(span)
    return " ".join(kept)


#: a verb whose particle says the direction: 'take the exposure down', 'pull down the
#: highlights', 'knock the brightness back', 'bring the shadows up'
_PARTICLE_VERB = r"(?:take|knock|pull|bring|dial|turn|tone|crank|push|nudge)"


def _with_direction(text: str) -> str:
    """A verb and its particle as the one word of that direction ('take the exposure
    down' -> 'lower the exposure')."""
    # 'take 25% off the saturation', 'take a little saturation out of the background'
    text = re.sub(r"\btake\s+(?:all\s+)?(?:the\s+)?colou?rs?\s+out\b", "remove the colour", text)
    text = re.sub(
        r"\b(?:take|knock|shave)\s+(.*?)\s*\b(?:off|out of|away from|out$)", r"reduce \1 ", text
    )
    for particle, verb in (("down", "lower"), ("back", "lower"), ("up", "raise")):
        # ('bring back the shadows' recovers them: not a lowering)
        verbs = _PARTICLE_VERB.replace("bring|", "") if particle == "back" else _PARTICLE_VERB
        text = re.sub(rf"\b{verbs}\s+(?:{particle})\b", verb, text)
        text = re.sub(
            rf"\b{verbs}\s+((?:the|its|my)\s+[a-z]+)\s+(?:{particle})\b", rf"{verb} \1", text
        )
    return text


def parse_adjustment(text: str) -> Subtask | None:
    """One clause's adjustment, or None when the words ask for none (or for what
    another subtask does: 'sharpen the photo' is the paper's deblurring, 'remove the
    blur' too)."""
    text = _with_direction(text)
    if re.search(
        r"\b(?:remove|fix|reduce|correct|undo|get rid of)\b.*\bblur|\b(?:de|un)-?blur", text
    ):
        return None
    text, modifiers, keep = split_modifiers(text)
    for phrase in PHRASES:
        match = phrase.pattern.search(text)
        if match is None:
            continue
        op = phrase.op
        rest = text[: match.start()] + " " + text[match.end() :]
        target, position = region_of(_without_amounts(rest))
        if target in _OP_REGIONS and op in ("exposure", "contrast"):
            op = _OP_REGIONS[target]  # 'brighten the shadows' is the shadows slider
            target = None
        elif target in _OP_REGIONS:
            target = None
        sign = phrase.sign
        if sign > 0 and (
            re.search(rf"\b{_DOWN}\b", text[: match.start()])
            or re.match(
                r"\s+(?:right\s+)?down\b", text[match.end() :]
            )  # ('temperature down a bit')
        ):
            sign = -sign  # ('reduce the vibrance': what no lowering phrase of its own says)
        amount, extra, given = amount_of(text, op, sign)
        if op == "sharpen" and not given and target is None:
            return None  # 'sharpen the photo': deblurring's tools and checks
        params: dict[str, Any] = {"op": op, "amount": amount, **phrase.extra, **extra}
        if op == "match":
            params["ref"] = match.group("ref")
        if op == "color":
            hue = re.search(
                r"(blu|green|redd|red|yellow|orange|purple|pink|teal|cyan|magenta|gold)",
                match.group(0),
            )
            params["colour"] = (
                {"blu": "blue", "redd": "red"}.get(hue.group(1), hue.group(1)) if hue else "blue"
            )
        if keep is not None:  # 'brighten it but keep the face unchanged'
            target, position = region_of(keep)
            if target is None:
                return None
        params.update(modifiers)
        if position:
            params["position"] = position
        kind = K.REGION_ADJUSTMENT if target else K.PHOTO_ADJUSTMENT
        return Subtask(kind, target=target, params=params)
    return None


def _without_amounts(text: str) -> str:
    text = re.sub("|".join(rf"\b{w}\b" for w in _STOP_WORDS), " ", text)
    text = re.sub(r"[+-]?\d+(?:\.\d+)?\s*(?:%|percent|(?:f-?)?stops?|ev|px|pixels?)?", " ", text)
    text = re.sub(_SOFTER, " ", text)
    return re.sub(_STRONGER, " ", text)
