"""What people say beside an edit: a complaint ('the sky looks dull'), a reason ('it's
distracting', 'the client doesn't want it') or a purpose ('so it fits on instagram').
They are not edits. A complaint names what the next edit's 'it' is ('the sky looks
dull, make it bluer': the sky), and a purpose may carry what the edit needs ('I need it
square for my profile picture, crop it': square); neither becomes a subtask of its own.
"""

from __future__ import annotations

import re

from layerpath.engine.adjust_words import WHOLE

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
_REASON = re.compile(r"^(?:because|since|so that|so it|so the|as it|as the|in order to)\b", re.I)
#: a purpose or reason at the end of an edit's clause ('crop it to 4:5 so it fits on
#: instagram', 'remove the bin because it's ugly')
_TAIL = re.compile(
    r"\s+(?:so that|so|because|since|in order to)\s+(?:it|the|my|our|i|we|they|you|this|"
    r"that|there|people|everyone)\b.*$|\s+for\s+(?:my|our|your|his|her|their)\s+[a-z' -]+$",
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
    subject = found.group("subject") or ""
    named = re.sub(r"^(?:the|my|our|your|his|her|their)\s+", "", subject.lower()).strip()
    if named in {"it", "this", "that", "they", "these", "those", "everything", "i", "we", "there"}:
        return ""
    return named


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


def without_purpose(text: str) -> str:
    """An edit's clause without the purpose or reason said at its end."""
    return _TAIL.sub("", text)


def naming(subject: str) -> str:
    """How a complaint's subject stands in for the next edit's 'it'."""
    whole = all(word in WHOLE for word in subject.split())  # ('the whole thing')
    return "the photo" if whole else f"the {subject}"
