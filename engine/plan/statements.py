"""What people say beside an edit: a complaint ('the sky looks dull'), a reason ('it's
distracting', 'the client doesn't want it') or a purpose ('so it fits on instagram').
They are not edits. A complaint names what the next edit's 'it' is ('the sky looks
dull, make it bluer': the sky), and a purpose may carry what the edit needs ('I need it
square for my profile picture, crop it': square); neither becomes a subtask of its own.
"""

from __future__ import annotations

import re

from layerpath.engine.plan.adjust_words import WHOLE

#: a clause that says how things are, not what to do: its subject, then a verb of
#: being, seeming or wanting ('the face is too dark', "it's too warm", 'there's a blue
#: cast', 'the client doesn't want it', 'I need it square')
_STATEMENT = re.compile(
    r"^(?:(?P<subject>it|this|that|they|these|those|everything|i|we|there|"
    r"(?:the|my|our|your|his|her|their)\s+[a-z][a-z' -]*?)\s+"
    r"(?P<verb>is|are|was|were|looks?|seems?|feels?|appears?|has|have|had|got|came out|"
    r"turned out|doesn'?t|don'?t|isn'?t|aren'?t|wasn'?t|need|needs|want|wants|hate|"
    r"hates)\b|(?:it|that|there|this|everything)'s\b)",
    re.I,
)
#: verbs of wanting: their subject is a person, not what the next edit's 'it' is
_WANTING = re.compile(r"^(?:doesn'?t|don'?t|need|needs|want|wants|hate|hates)$", re.I)
#: a need that is an edit, said as one ('the wall needs to be yellow', 'the sky needs
#: more contrast'): not a statement, and said as the edit (`as_edit`)
_NEEDED_EDIT = re.compile(
    r"\b(?:needs?|wants?)\s+(?:to\s+(?:be|look|get)|more|less|a\s+(?:bit|little)|some)\b", re.I
)
_THING = r"(?P<thing>(?:the|my|our|your|this|that)\s+[a-z][a-z' -]*?)"
_NEEDS_TO_BE = re.compile(
    rf"^{_THING}\s+(?:needs?|wants?|has|have)\s+to\s+(?:be|look|get)\s+(?P<rest>.+)$", re.I
)
_NEEDS_MORE = re.compile(
    rf"^{_THING}\s+(?:needs?|wants?)\s+(?P<rest>(?:more|less|a\s+bit|a\s+little|some)\b.+)$",
    re.I,
)
#: a clause that gives a reason or a purpose ('because it's distracting')
_REASON = re.compile(
    r"^(?:because|since|so that|so it|so the|as it|as the|in order to)\b|"
    r"^(?:(?:way|much|far|a bit|a little|slightly|just)\s+)?too\s+[a-z]+$|"  # ('way too saturated')
    r"^(?:i|we)\s+(?:\w+ed|shot|took|forgot|got)\b",  # ('I underexposed it')
    re.I,
)
#: a purpose or reason at the end of an edit's clause ('crop it to 4:5 so it fits on
#: instagram', 'remove the bin because it's ugly')
_TAIL = re.compile(
    r"\s+(?:so that|so|because|since|in order to)\s+(?:it|the|my|our|i|we|they|you|this|"
    r"that|there|people|everyone|nobody|no one|no-one)\b.*$|\s+for\s+(?:my|our|your|his|her|their)\s+[a-z' -]+$|"
    # 'for privacy', 'for the web'
    r"\s+for\s+(?:privacy|anonymity|safety|security|legal reasons|print(?:ing)?|(?:the\s+)?web|"
    r"social media|the client|a client)\s*$|"
    # 'to draw the eye to the middle', 'to help the subject stand out'
    r"\s+(?:in order\s+)?to\s+(?:draw|help|focus|lead|guide|pull|direct|attract|emphasi[sz]e|"
    r"hide|protect|show off)\s+(?:the|it|my|our|attention|them|people|viewers?|everyone|"
    r"more|focus)\b.*$|"
    # 'for some punch', 'for the wedding album', 'would suit this'
    r"\s+for\s+(?:some|a bit of|a little|more|extra)\s+[a-z]+$|"
    r"\s+from\s+the\s+(?:lens|camera|flash|sensor)$|"
    r"\s+would\s+(?:suit|work|look good|be nice|help)\b.*$",
    re.I,
)


def statement_subject(text: str) -> str | None:
    """The thing a statement or reason clause is about ('sky' for 'the sky looks dull',
    '' for "it's too warm" or a reason), None when the clause is not one."""
    if _REASON.match(text):
        return ""
    found = _STATEMENT.match(text)
    if found is None or _NEEDED_EDIT.search(text):
        return None
    if _WANTING.match(found.group("verb") or ""):  # ('the client hates it': not the client)
        return ""
    there = re.match(
        r"^there(?:'s| is| are)\s+(?:a|an|some|two|three)\s+([a-z][a-z' -]*)$", text, re.I
    )
    if there:  # ('there's a bin in the corner, remove it': the bin in the corner)
        return there.group(1).lower()
    subject = found.group("subject") or ""
    named = re.sub(r"^(?:the|my|our|your|his|her|their)\s+", "", subject.lower()).strip()
    if named in {"it", "this", "that", "they", "these", "those", "everything", "i", "we", "there"}:
        return ""
    return named


#: what a person wants the picture to be, said as a statement ('the client wants it in
#: black and white', 'I need it square')
_WANTED = re.compile(
    r"\b(?:wants?|needs?|would like|'d like|prefers?|asked for)\s+(?:it|this|them|the\s+"
    r"(?:photo|picture|image|shot|photos|pictures))\s+(?P<rest>.+)$",
    re.I,
)


def wanted(text: str) -> str | None:
    """What a statement of wanting asks the picture to be ('in black and white'), or
    None."""
    found = _WANTED.search(text)
    return found.group("rest").strip(" ,.!") if found else None


def needed_thing(text: str) -> str | None:
    """The thing a need is said of ('the faces need to be anonymous': 'faces'), or None."""
    found = _NEEDS_TO_BE.match(text)
    if found is None:
        return None
    return re.sub(r"^(?:the|my|our|your|this|that)\s+", "", found.group("thing").lower())


#: what puts a complaint right: its words, and the edit that answers them. A complaint
#: names the fault, so its adjective is the opposite of the edit ('too warm': cooler)
_REMEDIES = (
    (
        r"\b(?:colou?r|blue|yellow|orange|green|magenta|red|pink|purple|warm|cool|cold)\s+(?:colou?r\s+)?cast\b|"
        r"\btinted\b",
        "correct the white balance in it",
    ),
    (
        r"\btoo (?:warm|yellow|orange)\b|\b(?:yellowish|orangey)\b|\btemperature\b.*\btoo high\b",
        "make it cooler",
    ),
    (r"\btoo (?:cold|cool|blue)\b|\bbluish\b|\btemperature\b.*\btoo low\b", "make it warmer"),
    (
        r"\btoo (?:much|harsh|contrasty)\b.*\bcontrast\b|\bcontrast\b.*\btoo (?:high|strong|harsh)\b|"
        r"\btoo contrasty\b",
        "reduce the contrast in it",
    ),
    (r"\bnois[ey]\b|\bgrainy\b", "reduce the noise in it"),
    (r"\btoo (?:dark|dim)\b|\bunderexposed\b", "brighten it"),
    (r"\btoo bright\b|\boverexposed\b|\bblown out\b", "darken it"),
    (
        r"\b(?:too|over)[\s-]?saturated\b|\bgarish\b|\boversaturated\b",
        "reduce the saturation in it",
    ),
    (r"\bblurr?y\b|\bout of focus\b", "deblur it"),
    (r"\bcrooked\b|\btilted\b|\bwonky\b|\bnot (?:level|straight)\b", "straighten it"),
    (r"\b(?:flat|dull|lifeless|muddy)\b", "add contrast to it"),
)


def remedy(text: str) -> str | None:
    """The edit a complaint asks for ('there's an orange cast' -> 'correct the white
    balance', "it's too warm" -> 'make it cooler'), or None when it names no fault
    layerpath knows how to put right."""
    for words, edit in _REMEDIES:
        if re.search(words, text, re.I):
            return edit
    return None


def as_edit(text: str) -> str:
    """A need said as the edit it asks for ('the wall needs to be yellow' -> 'make the
    wall yellow', 'the sky needs more contrast' -> 'more contrast in the sky')."""
    found = _NEEDS_TO_BE.match(text)
    if found:
        return f"make {found.group('thing')} {found.group('rest')}"
    found = _NEEDS_MORE.match(text)
    if found:
        return f"{found.group('rest')} in {found.group('thing')}"
    return text


#: what an edit is for, said at its end ('for the wedding album'), where no swap's 'for'
#: names the new thing ('swap the cat for a dog')
_FOR = re.compile(
    r"\s+for\s+(?:the|a|an|my|our|your|his|her|their)\s+(?:[a-z'-]+\s+)*(?:album|banner|thumbnail|"
    r"slideshow|website|site|blog|post|story|stories|poster|cover|feed|profile|portfolio|magazine|"
    r"brochure|catalog(?:ue)?|listing|print|invitation|invite|card|newsletter|client|shoot|shots|"
    r"wedding|party|headshot|menu|ad|advert|campaign|instagram|facebook|youtube|tiktok|web|"
    r"gallery|exhibition|competition|family|grandma|grandpa|mum|mom|dad|boss|team|photo|photos|"
    r"picture|pictures|page|yearbook|book|frame|wall|office|shop|store)$",
    re.I,
)
_SWAPS = re.compile(r"\b(?:swap|exchange|trade|replace|switch|change)\b", re.I)


#: when or why it is wanted, said at the end ('before I post this')
_WHEN = re.compile(
    r"\s+before\s+(?:i|we|you|it|posting|printing|sending|uploading|sharing)\b.*$", re.I
)
#: the cause of a fault, said after it ('the colour cast from the lights'): not a region
_CAUSE = re.compile(r"\b(cast|noise|grain|vignetting)\s+(?:from|caused by|due to)\s+.+$", re.I)


def without_purpose(text: str) -> str:
    """An edit's clause without the purpose or reason said at its end."""
    text = _CAUSE.sub(r"\1", _WHEN.sub("", _TAIL.sub("", text)))
    # (a swap's 'for' names the new thing, unless 'with' named it: 'replace the sky with
    # a sunset for the poster')
    swap = _SWAPS.search(text)
    if swap and not re.search(r"\b(?:with|by|into)\b", text[swap.end() :]):
        return text
    return _FOR.sub("", text)


def naming(subject: str) -> str:
    """How a complaint's subject stands in for the next edit's 'it'."""
    whole = all(word in WHOLE for word in subject.split())  # ('the whole thing')
    return "the photo" if whole else f"the {subject}"
