"""Trajectories: real runs of the real engine recorded in a real SQLite trace store,
exported by the CLI as trajectory steps, chat examples and preference pairs, and a tiny
causal language model (GPT-2's architecture at a toy size, its BPE tokenizer trained by
the test on the export itself: nothing downloaded) fine-tuned on them by the
transformers Trainer on the CPU."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from layerpath.engine.execute.executor import Engine
from layerpath.engine.execute.subroutines import RuleTable
from layerpath.engine.learn.traces import SCHEMA, TraceStore, user_traces
from layerpath.engine.learn.trajectories import REWARD_PER_SECOND, trajectories
from layerpath.engine.types import EditRequest
from layerpath.plugin.cli import main
from layerpath.tools.registry import Registry
from tests.conftest import Scene

REGISTRY = Registry.from_catalogue()


def lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


@pytest.fixture
def recorded(scene: Scene, tmp_path: Path) -> TraceStore:
    """Runs whose only recolour rule is HSV (it cannot reach black: turned down, then
    the search finds Lab), a removal the search solves, and a removal of something no
    mask names (failed before any check: it teaches nothing)."""
    rules = tmp_path / "rules.json"
    rule = {"id": "T1", "subtask": "object_recoloration", "tools": ["named_masks", "hsv_recolor"]}
    rules.write_text(json.dumps({"rules": [rule]}))
    store = user_traces(None)
    assert store is not None
    engine = Engine(REGISTRY, rules=RuleTable.load(REGISTRY, rules), traces=store)
    for instruction in ("recolor the wall to black", "remove the ball", "remove the giraffe"):
        engine.run(EditRequest(instruction, scene.snapshot()))
    return store


def test_runs_export_as_trajectories_chat_examples_and_preference_pairs(
    recorded: TraceStore, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "steps.jsonl"
    assert main(["traces", "export", "-o", str(out)]) == 0
    steps = lines(out)
    kinds = [(s["state"]["subtask"]["kind"], s["route"], s["ok"]) for s in steps]
    assert ("object_recoloration", "rule:T1", False) in kinds  # turned down by the checks
    assert ("object_recoloration", "search", True) in kinds
    assert ("object_removal", "search", True) in kinds
    assert not any(s["state"]["subtask"].get("target") == "giraffe" for s in steps)
    turned_down = next(s for s in steps if s["route"] == "rule:T1")
    assert turned_down["tool_path"] == ["named_masks", "hsv_recolor"] and turned_down["failures"]
    found = next(
        s for s in steps if s["ok"] and s["state"]["subtask"]["kind"] == "object_recoloration"
    )
    assert found["tool_path"][-1] == "lab_recolor" and found["state"]["subtask"]["to"] == "black"
    assert found["reward"] == pytest.approx(
        found["quality"] - REWARD_PER_SECOND * found["cost"], abs=1e-3
    )
    assert found["subtask_id"] == turned_down["subtask_id"] != ""
    assert len(found["params"]) == len(found["tool_path"])

    sft = tmp_path / "sft.jsonl"
    assert main(["traces", "export", "--format", "sft", "-o", str(sft)]) == 0
    examples = lines(sft)
    assert len(examples) == 2  # the two accepted paths
    for example in examples:
        system, user, answer = example["messages"]
        assert [system["role"], user["role"], answer["role"]] == ["system", "user", "assistant"]
        assert set(json.loads(user["content"])) == {"subtask", "features", "alpha"}
        assert json.loads(answer["content"])["tools"][-1] in (
            "lab_recolor",
            "patch_fill",
            "opencv_telea",
            "opencv_ns",
        )
    strict = tmp_path / "strict.jsonl"
    assert (
        main(["traces", "export", "--format", "sft", "--min-reward", "2", "-o", str(strict)]) == 0
    )
    assert lines(strict) == []  # no path is worth more than a perfect one
    weighted = tmp_path / "weighted.jsonl"
    assert main(["traces", "export", "--format", "sft", "--weighted", "-o", str(weighted)]) == 0
    assert all(0 < e["weight"] <= 1 for e in lines(weighted))

    dpo = tmp_path / "dpo.jsonl"
    assert main(["traces", "export", "--format", "dpo", "-o", str(dpo)]) == 0
    (pair,) = lines(dpo)
    assert json.loads(pair["chosen"][0]["content"])["tools"][-1] == "lab_recolor"
    assert json.loads(pair["rejected"][0]["content"])["tools"] == ["named_masks", "hsv_recolor"]
    assert (
        pair["margin"] > 0 and json.loads(pair["prompt"][1]["content"])["subtask"]["to"] == "black"
    )
    assert "dpo records" in capsys.readouterr().out


def test_a_store_an_earlier_layerpath_made_gains_the_new_columns(tmp_path: Path) -> None:
    old = SCHEMA.replace(
        ",\n    subtask_id TEXT NOT NULL DEFAULT '',\n    subtask TEXT NOT NULL DEFAULT '{}'", ""
    )
    assert "subtask_id" not in old
    path = tmp_path / "traces.sqlite"
    with sqlite3.connect(path) as db:
        db.executescript(old)
        db.execute(
            "INSERT INTO attempts (run_id, created, subtask_kind, route, mode, alpha, tool_path,"
            " params, features, cost, quality, ok, failures) VALUES ('r', 0, 'object_removal',"
            " 'search', 'fast-slow', 1, '[\"named_masks\", \"patch_fill\"]', '[{}, {}]', '{}',"
            " 0.5, 0.9, 1, '[]')"
        )
    store = TraceStore(path)
    assert store.usable
    (row,) = store.attempts()
    assert row["subtask_id"] == "" and row["subtask"] == "{}"
    (step,) = trajectories(store.attempts(), RuleTable([], REGISTRY))
    assert step["state"]["subtask"] == {"kind": "object_removal"} and step["subtask_id"] is None


@pytest.mark.slow
def test_a_tiny_model_is_fine_tuned_on_the_export_with_a_real_trainer(
    recorded: TraceStore, tmp_path: Path
) -> None:
    """A toy GPT-2 (built here, random weights; its BPE tokenizer trained here on the
    export) learns the accepted paths: its loss falls, the result loads, and, prompted
    with a subtask's state, it answers the path it was taught."""
    torch = pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    sft = tmp_path / "sft.jsonl"
    assert main(["traces", "export", "--format", "sft", "-o", str(sft)]) == 0
    texts = [m["content"] for e in lines(sft) for m in e["messages"]]
    bpe = Tokenizer(models.BPE(unk_token="<unk>"))
    bpe.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    bpe.decoder = decoders.ByteLevel()
    bpe.train_from_iterator(
        [*texts, "<|system|>\n<|user|>\n<|assistant|>\n"],
        trainers.BpeTrainer(
            vocab_size=600, special_tokens=["<unk>", "<eos>"],
            initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        ),
    )  # fmt: skip
    tokenizer = transformers.PreTrainedTokenizerFast(
        tokenizer_object=bpe, unk_token="<unk>", eos_token="<eos>", pad_token="<eos>"
    )
    torch.manual_seed(0)
    config = transformers.GPT2Config(
        vocab_size=len(tokenizer), n_positions=1024, n_embd=64, n_layer=2, n_head=2,
        eos_token_id=tokenizer.eos_token_id, bos_token_id=tokenizer.eos_token_id,
    )  # fmt: skip
    base = tmp_path / "tiny"
    transformers.GPT2LMHeadModel(config).save_pretrained(base)
    tokenizer.save_pretrained(base)

    out = tmp_path / "tuned"
    code = main(
        ["traces", "finetune", "--data", str(sft), "--model", str(base), "-o", str(out),
         "--epochs", "60", "--learning-rate", "3e-3"]
    )  # fmt: skip
    assert code == 0
    losses = json.loads((out / "training.json").read_text())["losses"]
    assert losses[-1] < 0.3 * losses[0]

    from layerpath.plugin.finetune import _render, read_examples

    tuned = transformers.AutoModelForCausalLM.from_pretrained(out)
    reread = transformers.AutoTokenizer.from_pretrained(out)
    example = next(e for e in read_examples(sft) if "lab_recolor" in e["messages"][-1]["content"])
    prompt = reread(_render(reread, example["messages"], False), return_tensors="pt")
    with torch.no_grad():
        made = tuned.generate(
            **prompt, max_new_tokens=60, do_sample=False, pad_token_id=reread.eos_token_id
        )
    answer = reread.decode(made[0, prompt["input_ids"].shape[1] :], skip_special_tokens=True)
    assert "lab_recolor" in answer
