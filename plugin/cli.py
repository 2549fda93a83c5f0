"""The `layerpath` command line: plan, edit, batch, tools, models, rules, actions, bench."""

from __future__ import annotations

import argparse
import json
import logging
import os
import shutil
import sys
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path

from layerpath.engine import events
from layerpath.engine.execute.executor import Engine
from layerpath.engine.factory import transcriber_for
from layerpath.engine.files.io import (
    FLAT_OUTPUTS,
    LAYERED_OUTPUTS,
    Export,
    load_snapshot,
    output_problem,
    read_mask,
    write_atomically,
)
from layerpath.engine.files.report import build_report, refusal_report
from layerpath.engine.hosts.document import LayeredDocument
from layerpath.engine.hosts.session import RunSession
from layerpath.engine.learn.actions import Action
from layerpath.engine.learn.knowledge import model_description_table
from layerpath.engine.learn.learning import learn_in_background
from layerpath.engine.plan.llm_planner import planner_for
from layerpath.engine.plan.planner import Plan, offline_planner
from layerpath.engine.plan.references import parse_refs
from layerpath.engine.types import (
    EditRequest,
    LayerKind,
    Mode,
    RunResult,
    Snapshot,
    SubtaskKind,
)
from layerpath.errors import BadInput, LayerpathError, printable, shown
from layerpath.memory import reuse_freed_memory
from layerpath.plugin import cli_actions, cli_args, cli_config, cli_models, cli_traces
from layerpath.plugin.cli_log import setup_logging
from layerpath.plugin.interrupts import Interrupts
from layerpath.settings import Settings, load_settings
from layerpath.settings.endpoints import chosen as chosen_endpoint
from layerpath.settings.secrets import redact
from layerpath.tools.registry import Registry

log = logging.getLogger("layerpath")


def _parse_masks(items: Sequence[str], references: Sequence[str] = ()) -> dict[str, Path]:
    """`NAME=PATH` masks by name: each name once, and none the name of a reference
    (`references`), so a name means one thing."""
    masks: dict[str, Path] = {}
    for item in items:
        name, sep, path = item.partition("=")
        name = name.strip()
        if not sep or not name or not path:
            raise BadInput(f"--mask '{shown(item)}' should be NAME=PATH, e.g. --mask cat=cat.png")
        if name.lower() in (n.lower() for n in masks):
            raise BadInput(
                f"Two masks are named '{shown(name, 80)}'; give each its own name, or "
                "merge them into one picture."
            )
        if name.lower() in (r.lower() for r in references):
            raise BadInput(
                f"'{shown(name, 80)}' names both a mask and a reference; give them "
                f"different names (e.g. --mask {shown(name, 80)}=… --ref "
                f"{shown(name, 80)}_ref=…)."
            )
        masks[name] = Path(path)
    return masks


class _Progress:
    """Prints the run's events as plain lines on stderr: in words (with -v, the tools,
    routes and scores too; with -q, only warnings and failures)."""

    def __init__(self, verbose: bool = False, quiet: bool = False) -> None:
        self.shown = -1  # the last quarter of a long tool's progress printed
        self.verbose, self.quiet = verbose, quiet

    def __call__(self, event: object) -> None:
        say = lambda text: print(redact(text), file=sys.stderr, flush=True)  # noqa: E731
        if self.quiet and not isinstance(event, (events.PlanWarning, events.SubtaskFailed)):
            return
        if isinstance(event, events.PlanWarning):
            say(f"warning: {printable(event.message)}")
        elif isinstance(event, events.LearntRuleUsed):
            say(f"note: {printable(event.message)}")
        elif isinstance(event, events.PlanReady):
            steps = "; ".join(f"{s.id} {s.describe()}" for s in event.plan)
            say(f"plan ({event.planner}): {steps}" if self.verbose else f"plan: {steps}")
        elif isinstance(event, events.SubtaskStarted):
            how = f" via {event.route}" if self.verbose else ""
            say(f"[{event.index + 1}/{event.total}] {event.subtask.describe()}{how}")
        elif isinstance(event, events.ToolStarted):
            self.shown = -1
        elif isinstance(event, events.ToolProgress):  # a long tool: each quarter, once
            quarter = int(event.share * 4 + 1e-9)
            if quarter > self.shown and quarter > 0:
                self.shown = quarter
                say(f"  {event.tool if self.verbose else 'working'}: {quarter * 25}%")
        elif isinstance(event, events.FallbackToSearch):
            if self.verbose:
                say(f"  falling back to search: {event.reason}")
            else:
                say(f"  trying other tools ({event.reason})")
        elif isinstance(event, events.Retry):
            because = f" ({event.why})" if event.why else ""
            if self.verbose:
                say(f"  {event.tool} scored {event.quality:.2f}; trying again{because}")
            else:
                say(f"  not good enough yet; trying again{because}")
        elif isinstance(event, events.StepDone):
            if self.verbose:
                step = event.step
                say(f"  layer '{step.name}' q={step.quality:.2f} {step.cost:.2f}s")
            else:
                say(f"  done: layer '{event.step.name}'")
            if event.step.text:  # what OCR read or a caption: shown, never planned from
                say("    text: " + shown(event.step.text.replace("\n", " | "), 400))
        elif isinstance(event, events.SubtaskFailed):
            why = str(event.outcome.error)
            failure = event.outcome.failure
            if failure is not None and failure.region:  # how to give one, in this front end
                why = why if why.endswith((".", "!", "?")) else why + "."
                why += f" Here: --mask {failure.region.split()[-1]}=mask.png."
            say(f"  FAILED {event.outcome.subtask.describe()}: {printable(why)}")


def _print_plan(plan: Plan, as_json: bool) -> None:
    if as_json:
        print(json.dumps([s.to_json() for s in plan.subtasks], indent=2))
        return
    for warning in plan.warnings:
        print(f"warning: {warning}", file=sys.stderr)
    for s in plan.subtasks:
        print(f"{s.id}  {s.describe()}")


def _ref_files(given: list[str] | None) -> list[Path]:
    """The files --ref NAME=FILE names (an output must never be one of them)."""
    return [Path(item.partition("=")[2]) for item in given or [] if "=" in item]


def _endpoint(settings: Settings, args: argparse.Namespace) -> tuple[Settings, str | None]:
    """The settings with the LLM server and model this run asks for (--endpoint,
    --model: the LLM planner), and the planner asked for (None: the settings')."""
    endpoint, model = getattr(args, "endpoint", None), getattr(args, "model", None)
    planner = getattr(args, "planner", None)
    if not (endpoint or model):
        return settings, planner
    if planner == "offline":
        raise BadInput(
            "--endpoint and --model choose the LLM planner's server; drop --planner offline."
        )
    llm = chosen_endpoint(settings.llm, endpoint, model)
    return settings.model_copy(update={"llm": llm}), "llm"


def cmd_plan(args: argparse.Namespace) -> int:
    """The plan, grounded in the references given (their colours and words read, as a
    run would read them; no tool runs)."""
    settings = load_settings()
    references = parse_refs(args.ref)
    if args.image:
        snapshot, _ = load_snapshot(args.image, {})
    else:
        import numpy as np

        snapshot = Snapshot(np.full((64, 64, 4), 255, dtype=np.uint8))
    settings, asked = _endpoint(settings, args)
    chosen = asked or settings.planner
    planner, _ = planner_for(settings, chosen) if chosen == "llm" else (offline_planner, "")
    engine = Engine(
        Registry.from_catalogue(), planner=planner, transcriber=transcriber_for(settings)
    )
    request = EditRequest(args.instruction, snapshot, references=references)
    _print_plan(engine.plan(request, lambda e: None), args.json)
    for reference in references.values():
        said = {k: v for k, v in reference.to_json().items() if k not in ("name", "kind", "file")}
        if said:
            print(f"{reference.name}: {json.dumps(said)}", file=sys.stderr)
    return 0


def _save(document: LayeredDocument, output: Path, export: Export | None = None) -> Path:
    """Write the result; when that fails after the tools ran (the disk filled up, the
    folder went away), into the temporary folder instead, so the work is not lost."""
    try:
        return document.save(output, export)
    except OSError as exc:
        rescue = Path(tempfile.gettempdir()) / f"layerpath-rescued-{output.name}"
        try:
            saved = document.save(rescue, export)
        except OSError:
            raise BadInput(
                f"Could not write {output} ({exc.strerror or exc}), nor a copy in "
                f"{rescue.parent}; the result is lost. Free some space and run again."
            ) from exc
        print(
            f"warning: could not write {output} ({exc.strerror or exc}); the result is "
            f"saved in {saved} instead",
            file=sys.stderr,
        )
        return saved


def _write_report(path: Path, report: dict[str, object]) -> None:
    text = json.dumps(report, indent=2)
    write_atomically(path, lambda file: file.write(text.encode("utf-8")))


def _backup(image: Path) -> Path:
    """A copy of the image beside it, before it is saved over (--in-place): a hidden
    file no catalogue imports, numbered when one is there already."""
    image = Path(image)
    for number in range(1, 1000):
        tail = "" if number == 1 else f"-{number}"
        backup = image.with_name(f".{image.name}.layerpath-backup{tail}")
        if not backup.exists():
            break
    try:
        shutil.copy2(image, backup)
    except OSError as exc:
        raise BadInput(
            f"Could not keep a backup of {image} ({exc.strerror or exc}), so it was not "
            "saved over; write the result elsewhere with -o."
        ) from exc
    return backup


def _same_file(one: Path, other: Path) -> bool:
    try:
        return Path(one).resolve() == Path(other).resolve()
    except (OSError, RuntimeError):  # (a link that loops: said by output_problem)
        return False


def cmd_edit(args: argparse.Namespace, action: Action | None = None) -> int:
    """Run the instruction (or replay `action`) on the image and write the result."""
    if not 0.0 <= args.alpha <= 2.0:
        raise BadInput(f"--alpha {args.alpha} is outside 0..2 (0 = best quality, 2 = cheapest).")
    if args.threshold is not None and not 0.0 <= args.threshold <= 1.0:
        raise BadInput(
            f"--threshold {args.threshold} is outside 0..1 (the quality a step must reach)."
        )
    in_place = bool(getattr(args, "in_place", False))
    if in_place and args.output is not None:
        raise BadInput(
            "Give either -o OUT or --in-place (the result saved over the image, a backup "
            "kept), not both."
        )
    if not in_place and args.output is None:
        raise BadInput(
            "Say where the result goes: -o OUT.ora (layers) or -o OUT.jpg (flattened), or "
            "--in-place to save it over the image (a backup of it is kept)."
        )
    references = parse_refs(getattr(args, "ref", None))
    mask_files = _parse_masks(args.mask, list(references))
    selection = getattr(args, "selection", None)
    others = [*mask_files.values(), *_ref_files(getattr(args, "ref", None))]
    others += [selection] if selection is not None else []
    inputs = [args.image, *others]
    if in_place:  # in the image's own format, over it (a link's file): the others stay inputs
        args.image = Path(args.image).resolve()
        args.output, inputs = args.image, others
        if args.image.suffix.lower() not in LAYERED_OUTPUTS | FLAT_OUTPUTS:
            raise BadInput(
                "--in-place saves over the image in its own format, and layerpath cannot "
                f"write a {args.image.suffix or 'suffix-less'} file; give -o OUT.jpg (or .png, "
                ".tif, .ora) instead."
            )
    settings = load_settings()
    if getattr(args, "no_reflection", False):
        settings = settings.model_copy(update={"reflection": False})
    if getattr(args, "rules", None):
        settings = settings.model_copy(update={"rules": args.rules})
    document = LayeredDocument.open(args.image, mask_files, int(settings.max_megapixels * 1e6))
    size = (document.image.width, document.image.height)
    if selection is not None:  # (a host's selection, as an editor's own would be)
        document.selection = read_mask(selection, size, "selection")
    # where the results go is checked before any tool runs: a problem found after the
    # tools ran would lose their work
    problem = output_problem(args.output, inputs, size, deep=document.image.deep)
    if problem is None and args.report is not None:
        if _same_file(args.report, args.output):
            problem = "The report and the result would be one file; give the report its own name"
        else:
            problem = output_problem(args.report, inputs, any_format=True)
    cube = getattr(args, "cube", None)
    if problem is None and cube is not None:
        if cube.suffix.lower() != ".cube":
            problem = f"--cube writes a .cube file (a 3D LUT), not {cube.name}"
        elif any(_same_file(cube, other) for other in (args.output, args.report) if other):
            problem = "The LUT would overwrite another output; give it its own name"
        else:
            problem = output_problem(cube, inputs, any_format=True)
    export = Export(
        quality=95 if getattr(args, "quality", None) is None else args.quality,
        long_edge=getattr(args, "long_edge", None),
        srgb=bool(getattr(args, "srgb", False)),
    )
    problem = problem or export.problem(args.output, document.image.deep)
    if problem is not None:
        raise BadInput(problem + ".")
    settings, planner = _endpoint(settings, args)
    session = RunSession(document, settings, planner=planner, traces=not args.no_traces)
    request = session.request(
        args.instruction,
        alpha=args.alpha,
        mode=Mode(args.mode),
        action=action,
        threshold=args.threshold,
        references=references,
    )
    progress = _Progress(args.verbose, args.quiet)

    def on_event(event: object) -> None:
        if isinstance(event, events.PlanReady) and args.output.suffix.lower() == ".psd":
            if any(s.kind == SubtaskKind.BACKGROUND_REMOVAL for s in event.plan):
                raise BadInput(
                    "A background removal step cuts out what lies below it, which a PSD "
                    "layer cannot do; save as .ora (Krita, GIMP, the layerpath editor) or "
                    "as a flattened .png or .tif."
                )
        progress(event)

    result = None
    with Interrupts() as interrupts:
        try:
            result = session.run(request, on_event, cancel=lambda: interrupts.asked)
        except KeyboardInterrupt:
            pass
        except LayerpathError as exc:  # refused before any tool ran: said in the report too
            if args.report:
                _write_report(args.report, refusal_report(args.instruction, exc))
            raise
        if args.report and result is not None:
            _write_report(args.report, build_report(result, session.planner_name))
        kept = session.layers()  # the step layers in the document, as they came
        if not kept:  # nothing to keep: no file with an empty group
            if result is None or result.cancelled:
                print("cancelled before any step finished; nothing was written", file=sys.stderr)
                return 130
            said = f" (the report: {args.report})" if args.report else ""
            print(f"no step made a layer; no picture was written{said}", file=sys.stderr)
            return 1
        suffix = args.output.suffix.lower()
        if result is not None and suffix in (".kra", ".psd"):
            curves = suffix == ".kra" or bool(getattr(args, "adjustment_layers", False))
            _live_steps(session, document, result, suffix, curves, args.quiet)
        stopped = result is None or result.cancelled
        if in_place and stopped:  # the image stays as it was: the finished steps beside it
            args.output = args.image.with_name(f"{args.image.stem}-stopped{args.image.suffix}")
        backup = _backup(args.image) if in_place and not stopped else None
        written = _save(document, args.output, export)
        if backup is not None and not args.quiet:
            print(f"saved over {args.image}; the image as it was: {backup}", file=sys.stderr)
    if result is None or result.cancelled:
        print(
            f"cancelled: the {len(kept)} finished steps are saved in {written}",
            file=sys.stderr,
        )
        return 130
    learning = learn_in_background(settings, session.traces)
    if learning is not None and not args.quiet:
        print(
            f"learning new rules from your runs in the background (log: {learning})",
            file=sys.stderr,
        )
    ok = sum(1 for o in result.outcomes if o.ok)
    if not args.quiet:
        print(
            f"{ok}/{len(result.plan)} subtasks done, {len(kept)} layers, "
            f"{len(result.calls)} tool calls, {result.seconds:.1f}s -> {written}"
        )
    if cube is not None and not _cube(result, cube):
        return 1
    return 0 if result.ok else 1


def _live_steps(
    session: RunSession,
    document: LayeredDocument,
    result: RunResult,
    suffix: str,
    curves: bool,
    quiet: bool = False,
) -> None:
    """The run's steps a host can keep live, said by name: tone curves become Krita
    curves filter layers in a .kra, and Curves adjustment layers in a PSD with
    --adjustment-layers (where the curves pass on whole levels too); steps that are only
    a change of each pixel's brightness become layers of that change in multiply or
    colour dodge, in both."""
    from layerpath.engine.files.blends import Change
    from layerpath.engine.files.live import live_steps

    placed = {
        layer: (p.outcome, p.step.tool)
        for layer, p in session.placed.items()
        if p.group == session.group and p.step.visible
    }
    psd = suffix == ".psd"  # (a PSD keeps curves in whole levels, 17 points at most)
    live = live_steps(placed, result, Registry.from_catalogue(), curves=curves, whole=psd)
    for layer, made in live.items():
        document.make_live(layer, made)
    named = {
        kind: ", ".join(
            printable(session.placed[layer].step.name)
            for layer, made in live.items()
            if isinstance(made, Change) == (kind == "change")
        )
        for kind in ("curves", "change")
    }
    host = "Photoshop" if psd else "Krita"
    say = (lambda text: None) if quiet else (lambda text: print(text, file=sys.stderr))
    if named["curves"]:
        kept = "Curves adjustment layers" if psd else "curves layers"
        say(f"live in {host} as {kept}: {named['curves']}")
    if named["change"]:
        say(
            f"live in {host} as layers of their own change (multiply, colour dodge): "
            f"{named['change']}"
        )
    pictures = [
        k for k, p in session.placed.items() if k in placed and p.step.kind == LayerKind.PIXELS
    ]
    pictures = [k for k in pictures[1:] if k not in live]  # (the first has no step beneath)
    if pictures:
        names = ", ".join(printable(session.placed[k].step.name) for k in pictures)
        say(
            f"kept as pictures: {names} (in {host}, hiding a step beneath them leaves them "
            "as they were; the layerpath editor makes them again)"
        )


def _cube(result: RunResult, path: Path) -> bool:
    """Write the run's LUT (--cube) and say what is in it; False when nothing fits one."""
    from layerpath.engine.files.cube import cube_of, said, write_cube

    lut = cube_of(result, Registry.from_catalogue())
    for line in said(lut)[1:]:
        print(printable(line), file=sys.stderr)
    try:
        write_cube(path, lut, result.request.prompt)
    except LayerpathError as exc:
        print(f"no LUT written: {exc}", file=sys.stderr)
        return False
    print(f"{said(lut)[0]} -> {path}")
    return True


def cmd_tools(args: argparse.Namespace) -> int:
    rows = model_description_table(Registry.from_catalogue())
    if args.json:
        print(json.dumps({"tools": rows}, indent=2))
        return 0
    for row in rows:
        state = (
            "available"
            if row["available"]
            else f"unavailable: {row['unavailable_reason']} — fix: {row['fix']}"
        )
        subtasks = ", ".join(row["subtasks"])
        print(f"{row['name']:<20} {subtasks}  [{state}]")
    return 0


def cmd_bench(args: argparse.Namespace) -> int:
    from layerpath.benchmarks import bench

    suite = args.suite_option or args.suite or "scenes"
    if args.learn:
        if not args.warm_up:
            raise BadInput("--learn goes with --warm-up: layerpath bench --warm-up --learn")
        from layerpath.benchmarks import warmup

        warmup.bench_warm_up(args.out, args.seed)
        return 0
    if suite == "sizes":
        from layerpath.benchmarks import sizes

        sizes.bench_sizes(
            sizes.parse_sizes(args.sizes), args.out, args.instruction or sizes.INSTRUCTION
        )
        return 0
    if suite == "photos":
        from layerpath.benchmarks import photos_suite

        photos_suite.bench_photos(
            args.out,
            args.seed,
            args.photos == "all",
            args.tasks if args.tasks != 120 else None,
            "held-out" if args.held_out else "tuning",
        )
        return 0
    if suite == "removal":
        from layerpath.benchmarks import removal

        removal.bench_removal(
            args.out,
            args.seed,
            "held-out" if args.held_out else "tuning",
            args.tasks if args.tasks != 120 else removal.PLACEMENTS,
            args.peer,
            args.megapixels or removal.MEGAPIXELS,
        )
        return 0
    if suite == "batch":
        from layerpath.benchmarks import batch

        batch.bench_batch(
            args.out,
            args.instruction or batch.INSTRUCTION,
            args.megapixels or batch.MEGAPIXELS,
            count=args.tasks if args.tasks != 120 else len(batch.PHOTOS),
            fmt=args.format,
        )
        return 0
    if suite == "words":
        from layerpath.benchmarks import words

        results = words.bench_words(args.out)
        return 0 if sum(r.right for r in results) >= 0.95 * len(results) else 1
    if suite == "reflection":
        from layerpath.benchmarks import reflection

        reflection.bench_reflection(
            args.out, args.seed, args.tasks, args.photos == "all", max(1, args.jobs)
        )
        return 0
    if args.rounds is not None and args.rounds < 1:
        raise BadInput("--rounds must be at least 1.")
    if suite == "speed":
        from layerpath.benchmarks import speed

        edits = [args.instruction] if args.instruction else ()
        speed.bench_speed(args.out, args.rounds or speed.ROUNDS, args.image, edits)
        return 0
    if suite == "checks":
        from layerpath.benchmarks import checks

        checks.bench_checks(
            args.out,
            args.seed,
            args.photos == "all",
            args.rounds or 2,
            "held-out" if args.held_out else "tuning",
        )
        return 0
    bench.bench(
        suite,
        bench.parse_modes(args.modes),
        bench.parse_alphas(args.alpha),
        seed=args.seed,
        tasks=args.tasks,
        jobs=max(1, args.jobs),
        out=args.out,
        warm_up=_warm_up(args.seed) if args.warm_up else None,
    )
    return 0


def _warm_up(seed: int) -> Callable[[], list[dict[str, float]]]:
    """The rule-learning curve `layerpath bench --warm-up` adds to the report (with rule
    learning: layerpath bench --warm-up --learn)."""
    from layerpath.benchmarks.warmup import curve
    from layerpath.tools.registry import Registry

    return lambda: curve(seed, "shipped", Registry.from_catalogue(), [], learning=False)


def _gimp(args: argparse.Namespace) -> int:
    """`layerpath gimp install`: the GIMP 3 plug-in where GIMP 3 finds it."""
    from layerpath.plugin import gimp

    placed = gimp.install(args.plug_ins)
    print(
        f"installed the GIMP 3 plug-in as {placed}; restart GIMP and use Filters ▸ layerpath "
        "▸ Edit in words… (it runs this layerpath, as layerpath-command.txt beside it says)"
    )
    return 0


def _completion(args: argparse.Namespace) -> int:
    """The completion script of every command and option, for `args.shell` (shtab)."""
    import shtab

    print(shtab.complete(cli_args.parser(), shell=args.shell))
    return 0


def _batch(args: argparse.Namespace) -> int:
    """`layerpath batch` (its worker pool imported only for it: an edit starts sooner)."""
    from layerpath.plugin import cli_batch

    return cli_batch.cmd_batch(args)


#: the exit status of a fault of layerpath's own (sysexits' EX_SOFTWARE): 1 is kept for
#: a run some of whose steps failed
FAULT = 70


def main(argv: Sequence[str] | None = None) -> int:
    given = list(sys.argv[1:] if argv is None else argv)
    if given[:1] == ["krita"]:  # its own options, --help included
        from layerpath.plugin.krita import installer

        return installer.main(given[1:])
    if given[:1] == ["gui"]:  # (the `layerpath` command opens the editor: plugin/app.py)
        print("error: the editor opens from the layerpath command: layerpath gui", file=sys.stderr)
        return 2
    args = cli_args.parser().parse_args(given)
    reuse_freed_memory()  # a process of our own: camera-sized pictures' blocks reused
    log_file = setup_logging(args.verbose, args.quiet)
    commands = {
        "plan": cmd_plan,
        "edit": cmd_edit,
        "tools": cmd_tools,
        "config": cli_config.cmd_config,
        "completion": _completion,
        "gimp": _gimp,
        "models": cli_models.cmd_models,
        "rules": cli_actions.cmd_rules,
        "learn": cli_actions.cmd_learn,
        "actions": lambda a: cli_actions.cmd_actions(a, cmd_edit),
        "batch": _batch,
        "traces": cli_traces.cmd_traces,
        "bench": cmd_bench,
    }
    try:
        return commands[args.command](args)
    except LayerpathError as exc:
        log.debug("user error", exc_info=True)
        print(f"error: {redact(printable(str(exc)))}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("cancelled", file=sys.stderr)
        return 130
    except BrokenPipeError:  # `layerpath tools | head`: the reader had enough
        # Python flushes stdout again at exit; point it where that cannot fail
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 0
    except Exception as exc:  # a fault of ours: one line here, the traceback in the log
        if args.verbose:
            raise
        log.info("stopped by a fault", exc_info=True)  # (the log file: info and up)
        where = f"; the details are in {log_file}" if log_file else ""
        print(
            f"error: layerpath stopped on a fault of its own ({type(exc).__name__}: "
            f"{redact(printable(shown(str(exc), 200)))}){where}. Please report it.",
            file=sys.stderr,
        )
        return FAULT
