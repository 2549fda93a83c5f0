"""The `layerpath` command line's arguments: every command and option, with its help.
Nothing heavy is imported here, so `layerpath --help` and `--version` answer at once;
the commands themselves (cli.py and its cli_* modules) load the engine after parsing."""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import Any

from layerpath import __version__
from layerpath.choices import BATCH_FORMATS, SHEET, SUMMARY, TRACE_FORMATS, Mode

EDIT_EXAMPLES = """examples:
  layerpath edit photo.jpg "make it warmer and add a vignette" -o warmer.jpg
  layerpath edit photo.jpg "remove the cat and recolor the wall to yellow" \\
      --mask cat=cat.png --mask wall=wall.png -o result.ora --report run.json
  layerpath edit photo.jpg "make it look like golden hour, but keep the face unchanged" -o out.kra
  layerpath edit photo.jpg "replace the sky with the one in ref" --ref ref=sunset.jpg -o out.ora

exit status: 0 every step done; 1 some failed (the file holds every step that was
done; a failed step's best try is kept hidden); 2 the image, output or instruction
could not be used (the message says why); 130 stopped (the finished steps are saved);
70 a fault of layerpath's own (the message names the log with the details)."""

REF_HELP = (
    "a reference picture, note (.txt) or voice memo the instruction names (repeatable): "
    "'recolor the wall to the colour of swatch', 'replace the sign text with the name in "
    "note', 'match the colours of ref', 'replace the sky with the one in ref'"
)


def parser() -> argparse.ArgumentParser:
    """Every command and option of `layerpath` (the editor's `layerpath gui` has its own)."""
    parser = argparse.ArgumentParser(
        prog="layerpath",
        description="Multi-step image edits, one layer per tool step.",
        epilog="layerpath gui [IMAGE] opens the editor (pip install 'layerpath[gui]').",
    )
    parser.add_argument("--version", action="version", version=f"layerpath {__version__}")
    parser.add_argument(
        "-v",
        "--verbose",
        action="store_true",
        help="log details to stderr: tools, scores, tracebacks",
    )
    parser.add_argument(
        "-q", "--quiet", action="store_true", help="print only warnings, failures and errors"
    )
    sub = parser.add_subparsers(dest="command", required=True)

    plan = sub.add_parser("plan", help="show the subtask chain an instruction becomes")
    plan.add_argument("instruction")
    plan.add_argument("--json", action="store_true", help="print the plan as JSON")
    plan.add_argument("--planner", choices=["offline", "llm"], default=None)
    _endpoint_options(plan)
    plan.add_argument("--image", type=Path, help="image shown to the LLM planner")
    plan.add_argument("--ref", action="append", default=[], metavar="NAME=FILE", help=REF_HELP)

    edit = sub.add_parser(
        "edit",
        help="run an instruction on an image, write a layered file",
        description="Plan the instruction, run each step's tools, check each result, and "
        "write every step as a layer of its own (or the flattened picture).",
        epilog=EDIT_EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    edit.add_argument(
        "image",
        type=Path,
        help="the photo: JPEG, PNG, TIFF (8 or 16 bits), ORA, PSD, KRA; camera RAW and HEIC "
        "with layerpath[photo]. It is never changed",
    )
    edit.add_argument(
        "instruction",
        help="what to do, in everyday words; several edits in one sentence are several steps",
    )
    edit.add_argument(
        "--mask", action="append", default=[], metavar="NAME=PNG", help="a named mask (repeatable)"
    )
    edit.add_argument(
        "--selection",
        type=Path,
        metavar="PNG",
        help="the selection (white: selected), as an editor's: what 'this' means, and a rough "
        "region around what the instruction names (refined to it)",
    )
    edit.add_argument("--ref", action="append", default=[], metavar="NAME=FILE", help=REF_HELP)
    edit.add_argument(
        "-o",
        "--output",
        type=Path,
        help="OUT.ora, OUT.psd, OUT.kra (layers) or OUT.png, OUT.jpg, OUT.tif (flat)",
    )
    _in_place(edit)
    edit.add_argument("--report", type=Path, help="write the run report (JSON) here")
    _export_options(edit)
    edit.add_argument(
        "--cube",
        type=Path,
        metavar="LOOK.cube",
        help="also write the run's whole-picture colour steps as a 3D LUT (.cube) for "
        "Krita, Photoshop, Resolve or darktable; a step that depends on where a pixel lies "
        "(a vignette, clarity, a region) is left out, said by name",
    )
    edit.add_argument(
        "--adjustment-layers",
        action="store_true",
        help="in a PSD, the steps that are tone curves as Curves adjustment layers, live in "
        "Photoshop (Krita and GIMP show those as empty layers; a .kra is always live in Krita)",
    )
    edit.add_argument(
        "--alpha", type=float, default=1.0, help="0 = best quality ... 2 = cheapest (default 1)"
    )
    edit.add_argument(
        "--mode",
        choices=[m.value for m in Mode],
        default=Mode.FAST_SLOW.value,
        help="fast-slow (default): proven tool sequences first, a search over the tools when "
        "none fits or its result fails its check; slow: the search only; slow-eager: the "
        "search trying every next tool; fast: proven sequences only",
    )
    edit.add_argument(
        "--planner",
        choices=["offline", "llm"],
        default=None,
        help="who splits the instruction into steps: the built-in planner (offline, the "
        "default) or an LLM server (see --endpoint and `layerpath config`)",
    )
    _endpoint_options(edit)
    edit.add_argument("--threshold", type=float, default=None, help="quality threshold 0..1")
    edit.add_argument("--no-traces", action="store_true", help="do not record traces")
    edit.add_argument(
        "--no-reflection",
        action="store_true",
        help="retry a tool along its fixed schedule instead of answering what the checks found",
    )
    edit.add_argument(
        "--rules",
        choices=["all", "shipped"],
        default=None,
        help="the rules the fast path may use: all enabled ones (default), or the shipped "
        "ones alone (no rule learnt from your runs: the run is as anyone's would be)",
    )

    _config(sub)
    completion = sub.add_parser(
        "completion",
        help='print the shell\'s completion script: eval "$(layerpath completion bash)"',
        description="Tab completion of layerpath's commands and options. bash: add "
        "'eval \"$(layerpath completion bash)\"' to ~/.bashrc; zsh: 'layerpath completion "
        "zsh > ~/.zfunc/_layerpath' (with ~/.zfunc on $fpath).",
    )
    completion.add_argument("shell", choices=["bash", "zsh", "tcsh"])
    tools = sub.add_parser("tools", help="list the tools (the Model Description Table)")
    tools.add_argument("action", nargs="?", choices=["list"], default="list")
    tools.add_argument("--json", action="store_true", help="every field, as JSON")
    _models(sub)
    _rules_learn_and_actions(sub)
    _batch(sub)
    _traces(sub)
    sub.add_parser(  # (main hands its arguments to the installer)
        "krita",
        help="install the Krita plugin, build its zip, or install layerpath for Krita's Python",
    )
    gimp = sub.add_parser("gimp", help="install the GIMP 3 plug-in (Filters ▸ layerpath)")
    gimp_action = gimp.add_subparsers(dest="gimp_command", required=True)
    gimp_install = gimp_action.add_parser("install", help="copy it into GIMP 3's plug-ins folder")
    gimp_install.add_argument(
        "--plug-ins", type=Path, default=None, help="GIMP 3's plug-ins folder (default: yours)"
    )
    sub.add_parser(  # (main hands its arguments to the editor)
        "gui", help="open the editor: layerpath gui [IMAGE] (pip install 'layerpath[gui]')"
    )

    bench = sub.add_parser(
        "bench",
        help="measure cost and quality of the modes on a scene suite with ground truth",
    )
    bench.add_argument(
        "suite",
        nargs="?",
        default=None,
        help="scenes (default: modes x alpha on generated tasks), sizes (the demo edit "
        "at camera sizes: wall, tool seconds, peak memory), checks (the quality checks "
        "on labelled good and bad results in real photos: ROC AUC, false passes), photos "
        "(edits on real photos at native size, scored against the truth), reflection "
        "(those and everyday adjustments with no retries, fixed retries and reflection: "
        "first-try pass rate, pass within 3, accuracy) or words (the "
        "offline planner on the public instruction set: share planned exactly) or batch "
        "(photos per minute and the cost of batching per photo, 1 and 2 jobs, locally and "
        "on a local Ray) or removal (things put on real photos removed by layerpath, "
        "OpenCV's Telea and, with --peer gimp, GIMP's Heal selection, scored against the "
        "truth; --tasks placements, default 24) or speed (warmer, black and white, golden "
        "hour, contrast, a vignette and a blurred background on a 24 MP JPEG through the real "
        "command, side by side with ImageMagick and a Pillow 3D LUT on the same file: wall, "
        "peak memory)",
    )
    bench.add_argument("--suite", dest="suite_option", metavar="SUITE", help="the same")
    bench.add_argument(
        "--photos",
        choices=["all", "skimage"],
        default="all",
        help="checks and photos suites: scikit-image's photos and Debian's mate-backgrounds "
        "(fetched with apt-get into --out), or scikit-image's only",
    )
    bench.add_argument(
        "--held-out",
        action="store_true",
        help="photos, checks and removal suites: the held-out photos, skies and things (never "
        "tuned on: KDE's plasma-workspace-wallpapers and Tux Paint's food, flowers and "
        "mammals) instead of the tuning ones",
    )
    bench.add_argument(
        "--rounds",
        type=int,
        default=None,
        help="checks suite: placements per photo (default 2); speed suite: runs of each "
        "command, the fastest kept (default 3)",
    )
    bench.add_argument(
        "--image", type=Path, help="speed suite: your own photo (a JPEG) instead of a 24 MP one"
    )
    bench.add_argument(
        "--format",
        choices=list(BATCH_FORMATS),
        default="ora",
        help="batch suite: the results' format (default ora; jpg to compare with the peers')",
    )
    bench.add_argument(
        "--sizes",
        default="1,6,12,24,48",
        help="sizes suite: megapixels, comma separated (default 1,6,12,24,48)",
    )
    bench.add_argument(
        "--megapixels",
        type=float,
        help="removal suite: the photos' size (default 2; above it every photo is brought to "
        "it, enlarged where smaller: 24 for camera size); batch suite: the photos' size "
        "(default 6)",
    )
    bench.add_argument(
        "--instruction",
        help="sizes, batch and speed suites: the edit to time instead of the default (sizes: "
        "the demo photo's saucer and spoon masks are given), e.g. 'make it warmer'",
    )
    bench.add_argument(
        "--modes",
        default=",".join(m.value for m in Mode),
        help="comma separated (default: fast-slow,slow,slow-eager,fast)",
    )
    bench.add_argument(
        "--alpha",
        default="0,1,2",
        help="comma separated, each 0..2 (default 0,1,2; 0 = best quality, 2 = cheapest)",
    )
    bench.add_argument("--seed", type=int, default=0, help="the suite's seed (default 0)")
    bench.add_argument(
        "--peer",
        choices=["gimp"],
        help="removal suite: also GIMP's Heal selection (../shared/peers/gimp-heal/heal; "
        "installs Debian's gimp on first use)",
    )
    bench.add_argument("--tasks", type=int, default=120, help="how many tasks (default 120)")
    bench.add_argument(
        "--jobs", type=int, default=os.cpu_count() or 1, help="worker processes (default: cores)"
    )
    bench.add_argument(
        "--out", type=Path, default=Path("bench-out"), help="folder for the JSON and the plot"
    )
    bench.add_argument(
        "--warm-up",
        action="store_true",
        help="also the warm-up curve: fast path and cost after 0, 40, ... 200 tasks",
    )
    bench.add_argument(
        "--learn",
        action="store_true",
        help="with --warm-up: only the warm-up curves with rule learning, from the shipped "
        "rules and from none (writes warm-up.json and learning.json)",
    )
    _flags_anywhere(parser)
    return parser


def _flags_anywhere(parser: argparse.ArgumentParser) -> None:
    """-v and -q after a command too (`layerpath edit ... -v`): each command's parser
    takes them, leaving the main parser's default where they are not given."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for command in action.choices.values():
                taken = {s for a in command._actions for s in a.option_strings}
                if "-v" not in taken:
                    command.add_argument(
                        "-v", "--verbose", action="store_true", default=argparse.SUPPRESS,
                        help="log details to stderr: tools, scores, tracebacks",
                    )  # fmt: skip
                if "-q" not in taken:
                    command.add_argument(
                        "-q", "--quiet", action="store_true", default=argparse.SUPPRESS,
                        help="print only warnings, failures and errors",
                    )  # fmt: skip
                _flags_anywhere(command)


def _models(sub: Any) -> None:
    models = sub.add_parser("models", help="list, download, verify or remove model weights")
    action = models.add_subparsers(dest="models_command", required=True)
    listing = action.add_parser("list", help="every model: size, licence, state, tools")
    listing.add_argument("--json", action="store_true")
    for name, text in (
        ("download", "download (resuming) and sha256-check models"),
        ("verify", "re-hash a downloaded model's files"),
        ("remove", "delete a model's files"),
    ):
        command = action.add_parser(name, help=text)
        command.add_argument("names", nargs="*", metavar="NAME")
        command.add_argument("--all", action="store_true", help="every model in the catalogue")
        if name == "download":
            command.add_argument(
                "--offline",
                action="store_true",
                help="never touch the network: only reuse files from the Hugging Face cache",
            )


def _rules_learn_and_actions(sub: Any) -> None:
    rules = sub.add_parser("rules", help="the subroutine rules: shipped, mined and your actions")
    command = rules.add_subparsers(dest="rules_command", required=True)
    listing = command.add_parser("list", help="every rule, where it comes from, on or off")
    listing.add_argument("--json", action="store_true")
    show = command.add_parser("show", help="one rule whole")
    show.add_argument("id")
    show.add_argument("--json", action="store_true")
    for name, text in (
        ("disable", "stop the fast path using a rule"),
        ("enable", "use it again"),
        ("pin", "let this rule serve its kind whatever rule is learnt later"),
        ("unpin", "let the cheapest rule serve its kind again"),
        ("undo", "turn off a rule learnt from your runs: its kind goes back to what it had"),
    ):
        command.add_parser(name, help=text).add_argument("id")

    learn = sub.add_parser(
        "learn", help="learn rules from your runs' traces, each verified before it is used"
    )
    learn.add_argument("--json", action="store_true", help="every proposal and decision as JSON")
    learn.add_argument(
        "--replay-tasks", type=int, default=6, help="replay tasks per kind of subtask (default 6)"
    )
    learn.add_argument(
        "--inducer",
        choices=["offline", "llm", "both"],
        default=None,
        help="who proposes rules (default: both when the LLM planner is set, else offline)",
    )

    actions = sub.add_parser("actions", help="your saved actions: save, run, share")
    command = actions.add_subparsers(dest="actions_command", required=True)
    save = command.add_parser("save", help="save what a run did (its report) as an action")
    save.add_argument("name")
    save.add_argument("--from", dest="source", type=Path, required=True, metavar="RUN.json")
    save.add_argument("--subtask", metavar="ID", help="only this subtask (e.g. s2)")
    listing = command.add_parser("list", help="every saved action")
    listing.add_argument("--json", action="store_true")
    show = command.add_parser("show", help="one action whole")
    show.add_argument("name")
    show.add_argument("--json", action="store_true")
    run = command.add_parser("run", help="replay an action on an image, without planning")
    run.add_argument("name")
    run.add_argument("image", type=Path)
    run.add_argument(
        "--mask", action="append", default=[], metavar="NAME=PNG", help="a named mask (repeatable)"
    )
    run.add_argument("-o", "--output", type=Path, help="OUT.ora, .psd, .png, ...")
    _in_place(run)
    run.add_argument("--report", type=Path, help="write the run report (JSON) here")
    run.add_argument("--threshold", type=float, default=None, help="quality threshold 0..1")
    run.add_argument("--no-traces", action="store_true", help="do not record traces")
    run.set_defaults(alpha=1.0, mode=Mode.FAST_SLOW.value, planner=None)
    export = command.add_parser("export", help="write an action to a file to share")
    export.add_argument("name")
    export.add_argument("-o", "--output", type=Path, required=True, metavar="FILE.json")
    export.add_argument("--force", action="store_true", help="replace FILE.json if it exists")
    imported = command.add_parser("import", help="add an action from a file")
    imported.add_argument("file", type=Path)
    imported.add_argument("--as", dest="rename", metavar="NAME", help="save it under this name")
    imported.add_argument("--replace", action="store_true", help="replace an action of that name")
    command.add_parser("delete", help="delete an action").add_argument("name")
    rename = command.add_parser("rename", help="rename an action")
    rename.add_argument("name")
    rename.add_argument("new_name")


def _batch(sub: Any) -> None:
    batch = sub.add_parser(
        "batch",
        help="run one instruction or saved action on many photos",
        description=(
            "Run one instruction (or a saved action) on every photo: files, folders or "
            "globs. Each result is OUT_DIR/<photo name>.<format> (--name TEMPLATE: another "
            "name); run the same command "
            "again after a stop and it goes on where it stopped. OUT_DIR also gets "
            f"{SUMMARY} and {SHEET} (before and after, side by side)."
        ),
    )
    batch.add_argument("sources", nargs="+", metavar="SRC", help="photos, folders or globs")
    what = batch.add_mutually_exclusive_group(required=True)
    what.add_argument("--instruction", "-i", help="what to do to every photo")
    what.add_argument(
        "--action", "-a", metavar="NAME", help="a saved action (layerpath actions list)"
    )
    batch.add_argument("-o", "--out", type=Path, required=True, metavar="OUT_DIR")
    batch.add_argument(
        "--masks",
        type=Path,
        metavar="DIR",
        help="masks named <photo name>.<mask name>.png (IMG_0001.cat.png)",
    )
    batch.add_argument("--format", choices=list(BATCH_FORMATS), default="ora")
    batch.add_argument(
        "--name",
        default="{name}",
        metavar="TEMPLATE",
        help="each result's file name: {name} (the photo's), {n} (its number; {n:03} "
        "pads it), {date} (today); default {name}, e.g. '{name}-web' or '{date}-{n:03}'",
    )
    batch.add_argument(
        "--ref",
        action="append",
        default=[],
        metavar="NAME=FILE",
        help="a reference the instruction names, for every photo ('match the colours of ref')",
    )
    batch.add_argument(
        "--jobs",
        "-j",
        type=int,
        default=None,
        help="photos at once, each in a process of its own (default 1; with --ray, as many "
        "as the cluster has CPUs)",
    )
    batch.add_argument(
        "--ray",
        metavar="ADDRESS|auto",
        help="spread the photos over a Ray cluster (pip install 'layerpath[cluster]')",
    )
    batch.add_argument("--alpha", type=float, default=1.0, help="0 = best quality .. 2 = fastest")
    batch.add_argument("--mode", choices=[m.value for m in Mode], default=Mode.FAST_SLOW.value)
    batch.add_argument(
        "--rules",
        choices=["all", "shipped"],
        default=None,
        help="the rules the fast path may use: all enabled ones (default), or the shipped "
        "ones alone (every photo edited as anyone's would be)",
    )


def _traces(sub: Any) -> None:
    traces = sub.add_parser("traces", help="export what runs recorded as training data")
    action = traces.add_subparsers(dest="traces_command", required=True)
    export = action.add_parser("export", help="trajectories, chat examples or preference pairs")
    export.add_argument(
        "--format",
        choices=TRACE_FORMATS,
        default="jsonl",
        help="jsonl: a trajectory step per line; sft: chat examples of accepted paths; "
        "dpo: accepted over turned-down paths of one subtask",
    )
    export.add_argument("-o", "--out", required=True, type=Path, metavar="FILE")
    export.add_argument("--force", action="store_true", help="replace FILE if it exists")
    export.add_argument(
        "--min-reward", type=float, default=0.5, help="sft: the reward an example needs"
    )
    export.add_argument(
        "--weighted", action="store_true", help="sft: every accepted path, weighted by reward"
    )
    tune = action.add_parser("finetune", help="fine-tune a local model on an sft export")
    tune.add_argument("--data", required=True, type=Path, metavar="FILE")
    tune.add_argument("--model", required=True, type=Path, metavar="DIR")
    tune.add_argument("-o", "--out", required=True, type=Path, metavar="DIR")
    tune.add_argument("--force", action="store_true", help="write into DIR though it is not empty")
    tune.add_argument("--epochs", type=int, default=3, help="passes over the data, 1 to 100")
    tune.add_argument("--learning-rate", type=float, default=5e-4)


#: the LLM servers --endpoint knows by name (settings/endpoints.py's PRESETS)
ENDPOINTS = "openai, ollama, lmstudio, llamacpp, vllm"


def _endpoint_options(command: argparse.ArgumentParser) -> None:
    command.add_argument(
        "--endpoint",
        metavar="NAME|URL",
        help=f"plan with the LLM at this server for this run: {ENDPOINTS}, or a URL such as "
        "http://127.0.0.1:1234/v1 (default: the settings', or OPENAI_BASE_URL)",
    )
    command.add_argument(
        "--model", help="the LLM to plan with at that server ('auto': the first it lists)"
    )


def _config(sub: Any) -> None:
    config = sub.add_parser(
        "config", help="the LLM server and its API key (kept in the OS keyring), the settings"
    )
    action = config.add_subparsers(dest="action", required=True)
    action.add_parser("show", help="the settings, and whether a key is stored (never the key)")
    action.add_parser(
        "forget", help="forget what the servers were found to take (asked again on the next run)"
    )
    endpoint = action.add_parser(
        "endpoint", help="plan with an LLM at this server from now on (the LLM planner)"
    )
    endpoint.add_argument("endpoint", metavar="NAME|URL", help=f"{ENDPOINTS}, or a URL")
    endpoint.add_argument("--model", help="the model there ('auto': the first it lists)")
    for name, text in (
        ("set-key", "store the API key for a server in the OS keyring (asked without echo)"),
        ("delete-key", "remove the API key stored for a server"),
    ):
        command = action.add_parser(name, help=text)
        command.add_argument(
            "--endpoint", metavar="NAME|URL", help="the server (default: the settings')"
        )
        if name == "set-key":
            command.add_argument(
                "--stdin", action="store_true", help="read the key from standard input"
            )


def _export_options(command: argparse.ArgumentParser) -> None:
    """How a flattened picture (.jpg, .png, .tif) is written."""
    command.add_argument(
        "--quality", type=int, default=None, metavar="1..100", help="a JPEG's quality (default 95)"
    )
    command.add_argument(
        "--long-edge",
        type=int,
        default=None,
        metavar="PIXELS",
        help="scale the flattened picture down so its longest side is this (never up)",
    )
    command.add_argument(
        "--srgb",
        action="store_true",
        help="convert the flattened picture's colours to sRGB and embed that profile (for the web)",
    )


def _in_place(command: argparse.ArgumentParser) -> None:
    command.add_argument(
        "--in-place",
        action="store_true",
        help="save the result over the image, in its own format, keeping a backup of it "
        "beside it (.NAME.layerpath-backup): for a copy an editor such as Lightroom hands over",
    )
