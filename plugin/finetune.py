"""`layerpath traces finetune`: a local planner fine-tuned on exported trajectories.

Supervised fine-tuning of any causal language model folder (its weights and tokenizer,
e.g. a small instruct model downloaded once) on `layerpath traces export --format sft`
examples with the transformers Trainer, on the CPU or a GPU. Only the assistant's answer
(the tool path) is learnt: the system text and the state are context. A reward-weighted
export (`--weighted`) weights each example's loss by its reward. Needs the `ml` extra
(torch and transformers), imported only here.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

from layerpath.errors import BadInput, shown
from layerpath.files import check_output, parse_json, read_bytes

log = logging.getLogger(__name__)

#: the largest SFT export read (a real one is a few megabytes)
MAX_DATA_BYTES = 512_000_000
MAX_EPOCHS = 100


def read_examples(path: Path) -> list[dict[str, Any]]:
    """The SFT examples of an export, each checked: a clear error names a bad line."""
    examples = []
    data = read_bytes(path, "training data", MAX_DATA_BYTES)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise BadInput(f"{path} is not UTF-8 text; export it with --format sft.") from exc
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            example = parse_json(line, f"{path}, line {number},")
            roles = [m["role"] for m in example["messages"]]
            if not all(isinstance(m["content"], str) for m in example["messages"]):
                raise TypeError("a message's content is not text")
            float(example.get("weight", 1.0))
        except (BadInput, ValueError, KeyError, TypeError, AttributeError) as exc:
            raise BadInput(
                f"{path}, line {number}: not a chat example ({shown(str(exc), 120)})."
            ) from exc
        if roles[-1:] != ["assistant"]:
            raise BadInput(f"{path}, line {number}: the last message is not the answer.")
        examples.append(example)
    if not examples:
        raise BadInput(f"{path} holds no examples: export some with --format sft first.")
    return examples


def _render(tokenizer: Any, messages: list[dict[str, str]], answer: bool) -> str:
    """The conversation as the model reads it: its own chat template where it has one,
    else plain role headers."""
    if getattr(tokenizer, "chat_template", None):
        text: str = tokenizer.apply_chat_template(
            messages if answer else messages[:-1],
            tokenize=False,
            add_generation_prompt=not answer,
        )
        return text
    shown = messages if answer else messages[:-1]
    body = "".join(f"<|{m['role']}|>\n{m['content']}\n" for m in shown)
    return body if answer else body + "<|assistant|>\n"


def encode(tokenizer: Any, example: dict[str, Any], max_tokens: int) -> dict[str, Any]:
    """Token ids with labels on the answer only (-100 elsewhere), and the weight."""
    prompt = tokenizer(_render(tokenizer, example["messages"], False))["input_ids"]
    whole = tokenizer(_render(tokenizer, example["messages"], True))["input_ids"]
    if tokenizer.eos_token_id is not None:
        whole = [*whole, tokenizer.eos_token_id]
    whole = whole[:max_tokens]
    labels = [-100] * min(len(prompt), len(whole)) + whole[len(prompt) :]
    return {"input_ids": whole, "labels": labels, "weight": float(example.get("weight", 1.0))}


def finetune(
    data: Path, model: Path, out: Path, epochs: int = 3, learning_rate: float = 5e-4,
    batch_size: int = 4, max_tokens: int = 1024, seed: int = 0, replace: bool = False,
) -> dict[str, Any]:  # fmt: skip
    """Fine-tune the model folder `model` on the SFT export `data`; the result (weights,
    tokenizer, training.json with the losses) in `out`, a new or empty folder (or, with
    `replace`, one whose files may be written over) that is neither the model's nor in it."""
    try:
        import torch
        from transformers import (
            AutoModelForCausalLM,
            AutoTokenizer,
            Trainer,
            TrainerCallback,
            TrainingArguments,
        )
    except ImportError as exc:
        raise BadInput(
            "Fine-tuning needs PyTorch and transformers: pip install torch (the build for "
            'your machine), then pip install -e ".[ml]".'
        ) from exc
    if not 1 <= epochs <= MAX_EPOCHS:
        raise BadInput(f"--epochs is the number of passes over the data: 1 to {MAX_EPOCHS}.")
    if not (Path(model) / "config.json").is_file():
        raise BadInput(f"{model} is not a model folder (no config.json).")
    examples = read_examples(data)
    check_output(out, inputs=[data, model], replace=replace, folder=True)
    try:
        tokenizer = AutoTokenizer.from_pretrained(model)
        network = AutoModelForCausalLM.from_pretrained(model)
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise BadInput(
            f"{model} is not a causal language model transformers can load "
            f"({shown(str(exc).splitlines()[0] if str(exc) else type(exc).__name__, 160)})."
        ) from exc
    pad = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else tokenizer.eos_token_id
    rows = [encode(tokenizer, e, max_tokens) for e in examples]

    def collate(batch: list[dict[str, Any]]) -> dict[str, Any]:
        width = max(len(r["input_ids"]) for r in batch)
        fill = lambda values, with_: values + [with_] * (width - len(values))  # noqa: E731
        return {
            "input_ids": torch.tensor([fill(r["input_ids"], pad or 0) for r in batch]),
            "attention_mask": torch.tensor([fill([1] * len(r["input_ids"]), 0) for r in batch]),
            "labels": torch.tensor([fill(r["labels"], -100) for r in batch]),
            "weight": torch.tensor([r["weight"] for r in batch], dtype=torch.float32),
        }

    class WeightedTrainer(Trainer):
        """The answer tokens' loss, each example's weighted by its reward."""

        def compute_loss(
            self, model: Any, inputs: dict[str, Any], return_outputs: bool = False, **_: Any
        ) -> Any:
            weight = inputs.pop("weight")
            labels = inputs.pop("labels")
            outputs = model(**inputs)
            logits = outputs.logits[:, :-1].float()
            target = labels[:, 1:]
            per_token = torch.nn.functional.cross_entropy(
                logits.reshape(-1, logits.shape[-1]), target.reshape(-1),
                ignore_index=-100, reduction="none",
            ).view(target.shape)  # fmt: skip
            counted = (target != -100).float()
            per_example = (per_token * counted).sum(1) / counted.sum(1).clamp(min=1.0)
            loss = (per_example * weight).sum() / weight.sum().clamp(min=1e-6)
            return (loss, outputs) if return_outputs else loss

    losses: list[float] = []

    class Losses(TrainerCallback):
        def on_log(self, args: Any, state: Any, control: Any, logs: Any = None, **_: Any) -> None:
            if logs and "loss" in logs:
                losses.append(float(logs["loss"]))

    arguments = TrainingArguments(
        output_dir=str(Path(out) / "checkpoints"),
        num_train_epochs=epochs,
        per_device_train_batch_size=batch_size,
        learning_rate=learning_rate,
        logging_steps=1,
        save_strategy="no",
        report_to=[],
        seed=seed,
        remove_unused_columns=False,
        use_cpu=not torch.cuda.is_available(),
    )
    trainer = WeightedTrainer(
        model=network,
        args=arguments,
        train_dataset=rows,
        data_collator=collate,
        callbacks=[Losses()],
    )
    trainer.train()
    Path(out).mkdir(parents=True, exist_ok=True)
    trainer.save_model(str(out))
    tokenizer.save_pretrained(str(out))
    summary = {"examples": len(rows), "epochs": epochs, "losses": losses}
    (Path(out) / "training.json").write_text(json.dumps(summary, indent=2), encoding="utf-8")
    log.info("fine-tuned on %d examples: loss %.3f -> %.3f", len(rows), losses[0], losses[-1])
    return summary
