"""Reading the text found in the photo with language models (transformers, PyTorch):
the sentiment of what it says, and the answer to a question about it.

The text comes from OCR and is data: it goes into the model as the passage to judge or
to answer from, never into the plan. An answer is always a span of that text, cut from
it by character offsets, so the model cannot make words up.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from layerpath.errors import ToolFailed
from layerpath.kit.types import ArtifactKind, ToolContext, ToolResult
from layerpath.tools.hf import TorchModelTool, load_pretrained


def loader(class_name: str) -> Any:
    """A loader of (model, tokenizer) for the transformers class `class_name`."""

    def load(folder: str, device: str) -> tuple[Any, Any]:
        import transformers

        model = load_pretrained(getattr(transformers, class_name), folder, device)
        return model, transformers.AutoTokenizer.from_pretrained(folder, local_files_only=True)

    return load


def passage(inputs: Mapping[ArtifactKind, Any]) -> str:
    """The text read from the photo as one passage; a clear error when there is none."""
    text = " ".join(str(inputs[ArtifactKind.TEXT]).split())
    if not text:
        raise ToolFailed("No text was found in the photo to read.")
    return text


def model_inputs(model: Any, encoded: Mapping[str, Any]) -> dict[str, Any]:
    """The tokenizer's tensors the model's forward takes (DistilBERT takes no token
    types), on the model's device."""
    import inspect

    takes = inspect.signature(model.forward).parameters
    device = next(model.parameters()).device
    return {k: v.to(device) for k, v in encoded.items() if k in takes}


def sentiment(model: Any, tokenizer: Any, text: str, limit: int) -> tuple[str, float]:
    """The most likely label (from the model's config) and its probability."""
    import torch

    encoded = tokenizer(text, return_tensors="pt", truncation=True, max_length=limit)
    with torch.inference_mode():
        logits = model(**model_inputs(model, encoded)).logits[0].float()
    probs = logits.softmax(-1).cpu().numpy()
    best = int(probs.argmax())
    return str(model.config.id2label[best]).lower(), float(probs[best])


def answer(
    model: Any, tokenizer: Any, question: str, text: str, limit: int, longest: int
) -> tuple[str, float]:
    """The span of `text` (at most `longest` tokens) that best answers `question`, and
    its probability under the model's start and end distributions."""
    import torch

    encoded = tokenizer(
        question,
        text,
        return_tensors="pt",
        truncation="only_second",
        max_length=limit,
        return_offsets_mapping=True,
    )
    offsets = encoded.pop("offset_mapping")[0].tolist()
    in_text = [s == 1 for s in encoded.sequence_ids(0)]
    with torch.inference_mode():
        out = model(**model_inputs(model, encoded))
    start = out.start_logits[0].float().softmax(-1).cpu().numpy()
    end = out.end_logits[0].float().softmax(-1).cpu().numpy()
    best, span = -1.0, (0, 0)
    for i in (i for i, inside in enumerate(in_text) if inside):
        for j in range(i, min(len(in_text), i + longest)):
            if in_text[j] and start[i] * end[j] > best:
                best, span = float(start[i] * end[j]), (offsets[i][0], offsets[j][1])
    words = text[span[0] : span[1]].strip()
    if not words:
        raise ToolFailed("The question could not be answered from the text in the photo.")
    return words, best


class TextSentiment(TorchModelTool):
    """Whether the text in the photo reads positive or negative."""

    def run(
        self, ctx: ToolContext, inputs: Mapping[ArtifactKind, Any], params: Mapping[str, Any]
    ) -> ToolResult:
        text, limit = passage(inputs), int(params["max_tokens"])
        label, p = self.on_device(
            params,
            loader("AutoModelForSequenceClassification"),
            lambda pair, _: sentiment(pair[0], pair[1], text, limit),
        )
        return ToolResult({ArtifactKind.ANSWER: f"{label} ({p:.0%}): “{text}”"})


class TextQuestionAnswer(TorchModelTool):
    """The answer to the instruction's question, as a span of the text in the photo."""

    def run(
        self, ctx: ToolContext, inputs: Mapping[ArtifactKind, Any], params: Mapping[str, Any]
    ) -> ToolResult:
        question = str(ctx.subtask_params.get("question") or "").strip()
        if not question:
            raise ToolFailed("Ask a question about the text, e.g. 'what does the sign say?'.")
        text = passage(inputs)
        limit, longest = int(params["max_tokens"]), int(params["max_answer_tokens"])
        words, _ = self.on_device(
            params,
            loader("AutoModelForQuestionAnswering"),
            lambda pair, _: answer(pair[0], pair[1], question, text, limit, longest),
        )
        return ToolResult({ArtifactKind.ANSWER: words})
