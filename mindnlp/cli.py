# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""The `mindnlp` command line (also `python -m mindnlp`).

Commands:
  download  fetch a Hub repository into the shared HF cache or a folder, through mirrors
  generate  continue a prompt (or answer a chat message) with a causal language model
  embed     mean-pooled, normalised sentence embeddings, or their similarity matrix
  env       versions, backends, cache and endpoint in effect, for bug reports

Each command is a function taking the parsed arguments and returning the exit code, so tests
call `main([...])` and get the same code the shell would. `main` turns any error a command lets
through into one line on stderr and the exit code of its kind (the table below); the full
traceback is printed only with `--debug` or `MINDNLP_DEBUG=1`.
"""
import argparse
import errno
import importlib.metadata
import logging
import os
import platform
import sys

from . import __version__
from .hub import (
    DEFAULT_ENDPOINT,
    EXIT_CANNOT_GENERATE,
    EXIT_DISK_FULL,
    EXIT_ERROR,
    EXIT_INTERRUPTED,
    EXIT_REPO_NOT_FOUND,
    EXIT_USAGE,
    MIRRORS,
    resolve_endpoint,
)

# What a shell reports for a process that SIGPIPE ended; `mindnlp ... | head` ends with it, quietly.
EXIT_BROKEN_PIPE = 141

EXIT_CODES_HELP = """\
exit codes:
  0  success            1  other error        2  bad command line
  3  repository not found (or private without a token)
  4  gated repository or token refused
  5  revision not found
  6  no such file in the folder or repository (or no file matched the patterns)
  7  hub unreachable, or offline (HF_HUB_OFFLINE=1) and not in the cache
  8  disk full
  9  checksum mismatch (the file served does not match the Hub's hash)
  10  the model's files are unusable (invalid config, corrupt weights, unknown model type)
  11  the model cannot generate text (no causal LM head in the checkpoint)
  130  interrupted        141  output closed early (e.g. piped into head)
Hub requests time out after MINDNLP_HUB_TIMEOUT seconds (default 5) and are retried
MINDNLP_HUB_RETRIES times (default 2). --debug or MINDNLP_DEBUG=1 prints tracebacks.
"""


class CommandError(Exception):
    """A failure a command explains itself: the message is the line printed after "error: "."""

    def __init__(self, message, exit_code=EXIT_ERROR):
        super().__init__(message)
        self.exit_code = exit_code


def _human(n):
    """Byte count for people: 1023 B, 1.5 KiB, 3.2 GiB."""
    size = float(n)
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if size < 1024 or unit == "TiB":
            return f"{int(size)} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024


def _mirror_url(name):
    try:
        return resolve_endpoint(mirror=name)
    except ValueError as err:
        raise argparse.ArgumentTypeError(str(err)) from None


def _endpoint_url(url):
    if not url.startswith(("http://", "https://")):
        raise argparse.ArgumentTypeError(f"{url!r} is not an http(s) URL")
    return resolve_endpoint(endpoint=url)


def _add_download(commands):
    p = commands.add_parser(
        "download",
        help="download a model, dataset or space repository from the Hub or a mirror",
        description=(
            "Download files of a Hub repository into the shared Hugging Face cache (the default,\n"
            "reused by other HF tools) or into a plain folder (--local-dir). Interrupted downloads\n"
            "resume, transient errors are retried with backoff, and every file is checked against\n"
            "the Hub's hash before it gets its final name. Prints the resulting path on stdout."
        ),
        epilog=EXIT_CODES_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("repo_id", help="repository id, e.g. Qwen/Qwen2.5-0.5B")
    p.add_argument("files", nargs="*", metavar="FILE", help="only these files (paths inside the repository)")
    p.add_argument("--repo-type", choices=["model", "dataset", "space"], default="model")
    p.add_argument("--revision", help="branch, tag or commit (default: main)")
    p.add_argument("--include", action="append", metavar="GLOB", help="only files matching GLOB (repeatable)")
    p.add_argument("--exclude", action="append", metavar="GLOB", help="skip files matching GLOB (repeatable)")
    where = p.add_mutually_exclusive_group()
    where.add_argument("--local-dir", metavar="DIR", help="write the files into DIR instead of the cache")
    where.add_argument("--cache-dir", metavar="DIR", help="cache folder (default: HF_HUB_CACHE or HF_HOME/hub)")
    p.add_argument("--token", help="Hub access token (default: HF_TOKEN, then the stored login)")
    p.add_argument(
        "--mirror",
        dest="endpoints",
        action="append",
        type=_mirror_url,
        metavar="NAME",
        help=f"a known endpoint: {', '.join(f'{k} ({v})' for k, v in MIRRORS.items())}",
    )
    p.add_argument(
        "--endpoint",
        dest="endpoints",
        action="append",
        type=_endpoint_url,
        metavar="URL",
        help=(
            "a Hub-compatible endpoint; --endpoint and --mirror may be repeated and form an ordered "
            "fallback list (default: HF_ENDPOINT, else huggingface.co)"
        ),
    )
    p.add_argument("--max-workers", type=int, default=8, help="files fetched in parallel (default 8)")
    p.add_argument("--retries", type=int, default=5, help="retries of a transient error per file (default 5)")
    p.add_argument("--dry-run", action="store_true", help="list files, sizes and what would be fetched; download nothing")
    p.add_argument("--quiet", "-q", action="store_true", help="no progress bars or summary; print only the path")
    p.set_defaults(run=cmd_download)


def cmd_download(args):
    from huggingface_hub.errors import HFValidationError
    from huggingface_hub.utils import validate_repo_id

    from .download import Downloader, DownloadError

    try:
        validate_repo_id(args.repo_id)
    except HFValidationError:
        raise CommandError(f"{args.repo_id!r} is not a valid Hub repo id (ids look like 'namespace/name')",
                           EXIT_REPO_NOT_FOUND) from None
    endpoints = args.endpoints or [resolve_endpoint()]
    downloader = Downloader(
        args.repo_id,
        endpoints=endpoints,
        repo_type=args.repo_type,
        revision=args.revision,
        filenames=args.files,
        include=args.include,
        exclude=args.exclude,
        cache_dir=args.cache_dir,
        local_dir=args.local_dir,
        token=args.token,
        max_workers=args.max_workers,
        retries=args.retries,
        quiet=args.quiet,
    )
    try:
        plan = downloader.plan()
        if args.dry_run:
            _print_plan(plan)
            return 0
        if not args.quiet:
            todo = plan.to_fetch
            print(
                f"{plan.repo_id}@{plan.revision} ({plan.commit[:12]}) from {plan.endpoint}: "
                f"{len(plan.files)} files, {len(todo)} to fetch ({_human(plan.bytes_to_fetch)})",
                file=sys.stderr,
            )
        summary = downloader.run(plan)
    except DownloadError as err:
        print(f"error: {err}", file=sys.stderr)
        return err.exit_code
    except KeyboardInterrupt:
        print("interrupted: run the same command again to resume", file=sys.stderr)
        return EXIT_INTERRUPTED
    if not args.quiet:
        present = summary.files - summary.fetched
        print(
            f"done: {summary.files} files ({summary.fetched} fetched, {present} already present), "
            f"{_human(summary.bytes_fetched)} in {summary.seconds:.1f} s -> {summary.path}",
            file=sys.stderr,
        )
    print(summary.path)
    return 0


def _print_plan(plan):
    """The dry-run report: one line per file, then the totals."""
    print(f"repository: {plan.repo_id} ({plan.repo_type})")
    print(f"revision:   {plan.revision} -> {plan.commit}")
    print(f"endpoint:   {plan.endpoint}")
    print(f"into:       {plan.destination}")
    for f in plan.files:
        if f.path in plan.present:
            state = "present"
        elif f.path in plan.partial_bytes:
            state = f"resume from {_human(plan.partial_bytes[f.path])}"
        else:
            state = "fetch"
        print(f"  {_human(f.size):>10}  {state:<24} {f.path}")
    total = sum(f.size for f in plan.files)
    print(
        f"{len(plan.files)} files, {_human(total)}; would fetch {len(plan.to_fetch)} files, "
        f"{_human(plan.bytes_to_fetch)}"
    )


def _add_model_source(p):
    """Where a model comes from: a local folder or a hub id, through a mirror or an endpoint."""
    p.add_argument("model", help="a local folder or a Hub model id, e.g. openai-community/gpt2")
    p.add_argument("--revision", help="branch, tag or commit (default: main)")
    p.add_argument("--cache-dir", metavar="DIR", help="cache folder (default: HF_HUB_CACHE or HF_HOME/hub)")
    p.add_argument("--mirror", metavar="NAME", help=f"a known endpoint: {', '.join(sorted(MIRRORS))}, or a URL")
    p.add_argument("--endpoint", type=_endpoint_url, metavar="URL", help="a Hub-compatible endpoint (default: "
                   "HF_ENDPOINT, else huggingface.co)")
    p.add_argument("--dtype", default="auto", choices=["auto", "float32", "float16", "bfloat16"],
                   help="weights' dtype (default auto: the checkpoint's)")


def _load_source(args):
    """from_pretrained keywords for the model source options."""
    if args.mirror is not None:
        try:
            resolve_endpoint(mirror=args.mirror)
        except ValueError as err:
            raise CommandError(str(err), EXIT_USAGE) from None
    return {"revision": args.revision, "cache_dir": args.cache_dir, "mirror": args.mirror, "endpoint": args.endpoint}


def _add_generate(commands):
    p = commands.add_parser(
        "generate",
        help="continue a prompt with a causal LM, or transform it with a sequence-to-sequence LM",
        description=(
            "Load a causal language model and its tokenizer (a local folder or a Hub id) and print\n"
            "the prompt's continuation: greedy by default (or as the model's generation config says),\n"
            "sampled with --do-sample. With --chat the prompt is a user message rendered through the\n"
            "tokenizer's chat template and only the reply is printed. A sequence-to-sequence model\n"
            "(T5, BART, Marian...) reads the prompt with its encoder and only its output is printed."
        ),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    _add_model_source(p)
    p.add_argument("--prompt", required=True, help="the text to continue (the user message with --chat)")
    p.add_argument("--max-new-tokens", type=int, default=50, help="tokens to generate at most (default 50)")
    p.add_argument("--do-sample", action=argparse.BooleanOptionalAction, default=None,
                   help="sample instead of greedy decoding (default: the model's generation config)")
    p.add_argument("--temperature", type=float, help="sampling temperature")
    p.add_argument("--top-p", type=float, help="nucleus sampling: keep the smallest set of tokens of this mass")
    p.add_argument("--top-k", type=int, help="sample among the k most likely tokens")
    p.add_argument("--seed", type=int, help="seed of the sampler, for reproducible samples")
    p.add_argument("--stream", action="store_true", help="print tokens as they are generated")
    p.add_argument("--chat", action="store_true", help="treat the prompt as a chat message (chat template)")
    drafts = p.add_mutually_exclusive_group()
    drafts.add_argument("--assistant", metavar="MODEL",
                        help="assisted decoding: a smaller model with the same tokenizer drafts tokens that the "
                             "model checks in one pass (same output, often faster); loaded like MODEL")
    drafts.add_argument("--prompt-lookup", type=int, metavar="N",
                        help="assisted decoding with drafts of up to N tokens copied from the prompt")
    p.set_defaults(run=cmd_generate)


def _model_dtype(name):
    from . import core

    return "auto" if name == "auto" else getattr(core, name)


def _check_generate_arguments(args):
    """Refuse settings that cannot work before any model is loaded (exit code 2)."""
    problems = []
    if args.max_new_tokens < 1:
        problems.append(f"--max-new-tokens must be at least 1, got {args.max_new_tokens}")
    if args.prompt_lookup is not None and args.prompt_lookup < 1:
        problems.append(f"--prompt-lookup must be at least 1, got {args.prompt_lookup}")
    if not args.prompt and not args.chat:
        problems.append("--prompt is empty: give the text to continue")
    if args.temperature is not None and args.temperature <= 0:
        problems.append(f"--temperature must be above 0, got {args.temperature:g} (for greedy decoding, drop "
                        "--temperature and --do-sample)")
    if args.top_p is not None and not 0 < args.top_p <= 1:
        problems.append(f"--top-p must be in (0, 1], got {args.top_p:g}")
    if args.top_k is not None and args.top_k < 1:
        problems.append(f"--top-k must be at least 1, got {args.top_k}")
    if problems:
        raise CommandError("; ".join(problems), EXIT_USAGE)


def _load_generator(name, args, source):
    """The text generator at `name`: a causal LM, or a sequence-to-sequence LM (T5, BART, Marian...)
    that writes its output from the prompt as its encoder's input. Refused (exit code 11) when
    it cannot generate: its family has neither head in mindnlp, it is an encoder loaded without
    `is_decoder`, or the checkpoint lacks LM-head weights that would therefore be random."""
    from .transformers import AutoConfig, AutoModelForCausalLM, AutoModelForSeq2SeqLM
    from .transformers.generation.utils import attends_both_ways

    config = AutoConfig.from_pretrained(name, **source)
    auto_class = AutoModelForCausalLM
    if getattr(config, "is_encoder_decoder", False) and AutoModelForSeq2SeqLM._model_mapping.get(type(config)):
        auto_class = AutoModelForSeq2SeqLM
    if auto_class._model_mapping.get(type(config)) is None:
        raise CommandError(f"{name} is a {config.model_type} model, which has no causal or sequence-to-sequence "
                           "language-model head in mindnlp: it cannot generate text (for sentence embeddings, use "
                           "`mindnlp embed`)", EXIT_CANNOT_GENERATE)
    if attends_both_ways(config):
        raise CommandError(f"{name} is a {config.model_type} encoder (is_decoder is false in its config.json): "
                           "it attends in both directions and cannot continue text", EXIT_CANNOT_GENERATE)
    # The loading report is checked here and turned into the refusal below; logged as well, it
    # would only repeat it at length.
    report = logging.getLogger("mindnlp.transformers.modeling_utils")
    level = report.level
    report.setLevel(logging.ERROR)
    try:
        model, info = auto_class.from_pretrained(name, config=config, dtype=_model_dtype(args.dtype),
                                                 output_loading_info=True, **source)
    finally:
        report.setLevel(level)
    is_head = _head_keys(model)
    head = sorted(key for key in info["missing_keys"] if is_head(key))
    head += sorted(key for key, *_ in info["mismatched_keys"] if is_head(key))
    if head:
        raise CommandError(f"{name} has no trained language-model head for {type(model).__name__} (missing from "
                           f"the checkpoint: {', '.join(head[:3])}{', ...' if len(head) > 3 else ''}); it would "
                           "print random text", EXIT_CANNOT_GENERATE)
    return model


def _head_keys(model):
    """Which checkpoint keys belong to the LM head: those outside the base model's prefix, or,
    for a model whose body has no prefix (T5's encoder and decoder sit at the top level), the
    output embedding's."""
    if model.base_model is not model:
        body = model.base_model_prefix + "."
        return lambda key: not key.startswith(body)
    output_embeddings = model.get_output_embeddings()
    names = {name + "." for name, module in model.named_modules() if module is output_embeddings and name}
    return lambda key: any(key.startswith(name) for name in names)


def cmd_generate(args):
    from . import core
    from .transformers import AutoTokenizer, TextStreamer

    _check_generate_arguments(args)
    source = _load_source(args)
    model = _load_generator(args.model, args, source)
    tokenizer = AutoTokenizer.from_pretrained(args.model, **source)
    settings = {"max_new_tokens": args.max_new_tokens}
    if args.assistant is not None:
        settings["assistant_model"] = _load_generator(args.assistant, args, source)
    if args.prompt_lookup is not None:
        settings["prompt_lookup_num_tokens"] = args.prompt_lookup
    if args.chat:
        if tokenizer.chat_template is None:
            raise CommandError(f"the tokenizer of {args.model} has no chat template; drop --chat")
        inputs = tokenizer.apply_chat_template([{"role": "user", "content": args.prompt}],
                                               add_generation_prompt=True, return_dict=True, return_tensors="pt")
    else:
        inputs = tokenizer(args.prompt, return_tensors="pt")
    if inputs["input_ids"].shape[1] == 0:
        raise CommandError(f"the prompt encodes to no tokens with the tokenizer of {args.model}; give a longer "
                           "--prompt", EXIT_USAGE)
    for name in ("do_sample", "temperature", "top_p", "top_k"):
        if getattr(args, name) is not None:
            settings[name] = getattr(args, name)
    if tokenizer.pad_token_id is not None:
        settings["pad_token_id"] = tokenizer.pad_token_id
    if args.seed is not None:
        core.manual_seed(args.seed)
    # A sequence-to-sequence model's output is new text (its decoder starts from a start token);
    # a causal LM's continues the prompt.
    continues_prompt = not model.config.is_encoder_decoder
    prompt_length = inputs["input_ids"].shape[1] if continues_prompt else 1
    if args.stream:
        streamer = TextStreamer(tokenizer, skip_prompt=args.chat or not continues_prompt, skip_special_tokens=True)
        model.generate(**inputs, streamer=streamer, **settings)
        return 0
    sequence = model.generate(**inputs, **settings)[0].tolist()
    reply = tokenizer.decode(sequence[prompt_length:], skip_special_tokens=True)
    print(args.prompt + reply if continues_prompt and not args.chat else reply)
    return 0


def _add_embed(commands):
    p = commands.add_parser(
        "embed",
        help="sentence embeddings (mean-pooled, normalised) as JSON, or their similarity matrix",
        description=(
            "Run each text through the model's feature-extraction path, average its token states\n"
            "(mean pooling) and scale to unit length, as sentence-transformers models such as\n"
            "all-MiniLM-L6-v2 do. Prints a JSON list of vectors, one per text, or with --similarity\n"
            "the matrix of cosine similarities."
        ),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    _add_model_source(p)
    p.add_argument("texts", nargs="+", metavar="TEXT", help="the sentences to embed")
    p.add_argument("--similarity", action="store_true", help="print the cosine-similarity matrix instead")
    p.set_defaults(run=cmd_embed)


def sentence_embeddings(extractor, texts):
    """Unit-length mean of each text's token states, from a feature-extraction pipeline (one
    text at a time, so no padding enters the mean)."""
    import numpy as np

    vectors = []
    for text in texts:
        states = extractor(text, return_tensors=True)[0].float().numpy()
        mean = states.mean(axis=0)
        vectors.append(mean / max(float(np.linalg.norm(mean)), 1e-12))
    return np.stack(vectors)


def cmd_embed(args):
    import json

    from .transformers import pipeline

    source = _load_source(args)
    extractor = pipeline("feature-extraction", model=args.model, dtype=_model_dtype(args.dtype), **source)
    vectors = sentence_embeddings(extractor, args.texts)
    if not args.similarity:
        print(json.dumps([[round(float(x), 7) for x in row] for row in vectors]))
        return 0
    similarity = vectors @ vectors.T
    width = max(len(str(i)) for i in range(len(args.texts)))
    for i, text in enumerate(args.texts):
        print(f"[{i:>{width}}] {text}")
    print(" " * (width + 2) + " ".join(f"{f'[{j}]':>8}" for j in range(len(args.texts))))
    for i, row in enumerate(similarity):
        print(f"[{i:>{width}}]" + " ".join(f"{value:8.4f}" for value in row))
    return 0


def _add_env(commands):
    p = commands.add_parser("env", help="print versions, backends, cache and endpoint (for bug reports)")
    p.set_defaults(run=cmd_env)


def _version_of(distribution):
    try:
        return importlib.metadata.version(distribution)
    except importlib.metadata.PackageNotFoundError:
        return None


def _backends():
    """Backends the tensor core can use here, and its default dtype.

    The core is imported only now, inside the command, so that `mindnlp download` and
    `mindnlp --help` never pay for it, and a core that does not import still leaves the rest
    of the report readable.
    """
    try:
        from . import core
        from .core import cuda

        names = ["cpu"] + (["cuda"] if cuda.is_available() else [])
        return ", ".join(names), str(core.get_default_dtype())
    except (ImportError, AttributeError) as err:
        return f"unknown (mindnlp.core is not usable: {err})", "unknown"


def _cpu_description():
    """The CPU, the vector features the compiled kernels can use, and the thread count."""
    try:
        import llvmlite.binding as llvm

        from .core import get_num_threads

        wanted = ("sse4.2", "avx", "avx2", "fma", "avx512f", "avx512bw", "avx512vnni", "neon", "sve")
        features = llvm.get_host_cpu_features()
        used = [name for name in wanted if features.get(name)]
        return (f"{llvm.get_host_cpu_name()}, {os.cpu_count()} cores, {get_num_threads()} threads in use, "
                f"features: {' '.join(used) or 'none of ' + ' '.join(wanted)}")
    except (ImportError, RuntimeError, AttributeError) as err:
        return f"unknown ({err})"


def cmd_env(args):
    from huggingface_hub import constants, get_token

    lines = [
        ("mindnlp", __version__),
        ("python", f"{platform.python_version()} ({platform.python_implementation()}, {platform.platform()})"),
    ]
    cupy = next(
        (d for d in importlib.metadata.packages_distributions().get("cupy", [])),
        "cupy",
    )
    for name in ("numpy", "scipy", "numba", "ml_dtypes", "safetensors", "huggingface_hub", "tokenizers", "jinja2",
                 "datasets", "pyarrow", cupy):
        lines.append((name, _version_of(name) or "not installed"))
    backends, dtype = _backends()
    lines.append(("backends", backends))
    lines.append(("default dtype", dtype))
    lines.append(("cpu", _cpu_description()))
    lines.append(("hub cache", constants.HF_HUB_CACHE))
    endpoint = resolve_endpoint()
    if "HF_ENDPOINT" in os.environ:
        source = "from HF_ENDPOINT"
    elif endpoint == DEFAULT_ENDPOINT:
        source = "default; set HF_ENDPOINT or pass --mirror/--endpoint to change"
    else:
        source = ""
    lines.append(("endpoint", f"{endpoint} ({source})" if source else endpoint))
    lines.append(("token", "set" if get_token() else "not set"))
    lines.append(("offline mode", "on (HF_HUB_OFFLINE)" if constants.is_offline_mode() else "off"))
    width = max(len(k) for k, _ in lines)
    for key, value in lines:
        print(f"{key + ':':<{width + 1}} {value}")
    return 0


def _add_run(commands):
    from . import launch as launcher

    p = commands.add_parser("run", help="start a data-parallel job: N processes of a script, over MPI (as torchrun)",
                            description=launcher.__doc__.split("\n\n")[0])
    launcher.add_arguments(p)
    p.set_defaults(run=cmd_run)


def cmd_run(args):
    from . import launch as launcher

    try:
        return launcher.launch(args.nproc_per_node, args.script, args.script_args, args.hostfile, args.module)
    except (FileNotFoundError, ValueError) as err:
        print(f"mindnlp run: {err}", file=sys.stderr)
        return EXIT_USAGE


def build_parser():
    parser = argparse.ArgumentParser(
        prog="mindnlp",
        description="mindnlp: Hugging Face models on a PyTorch-compatible tensor core of its own.",
        epilog=EXIT_CODES_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"mindnlp {__version__}")
    parser.add_argument("--debug", action="store_true", help="print the full traceback of an error")
    # Accepted after the command too; SUPPRESS keeps a subcommand's default from hiding the main flag.
    debug = argparse.ArgumentParser(add_help=False)
    debug.add_argument("--debug", action="store_true", default=argparse.SUPPRESS,
                       help="print the full traceback of an error (also MINDNLP_DEBUG=1)")
    commands = parser.add_subparsers(title="commands", metavar="COMMAND", parser_class=_parser_with(debug))
    _add_download(commands)
    _add_generate(commands)
    _add_embed(commands)
    _add_env(commands)
    _add_run(commands)
    return parser


def _parser_with(*parents):
    """The subcommand parser class: argparse's, with `parents` added to every command."""

    class CommandParser(argparse.ArgumentParser):
        def __init__(self, *args, **kwargs):
            kwargs["parents"] = [*kwargs.get("parents", ()), *parents]
            super().__init__(*args, **kwargs)

    return CommandParser


def describe_error(err):
    """The exit code and the one line that tell a user what went wrong with `err`."""
    message = " ".join(str(err).split())
    code = getattr(err, "exit_code", None)
    if isinstance(code, int):
        return code, message
    if isinstance(err, OSError) and err.errno in (errno.ENOSPC, errno.EDQUOT):
        return EXIT_DISK_FULL, f"disk full: {message}; free some space and run the command again"
    if isinstance(err, MemoryError):
        return EXIT_ERROR, "out of memory; try a smaller model or --dtype bfloat16"
    kind = type(err).__name__
    return EXIT_ERROR, f"{kind}: {message}" if message else kind


def _debugging(args):
    return getattr(args, "debug", False) or os.environ.get("MINDNLP_DEBUG", "").strip().lower() in ("1", "true", "yes")


def _silence_stdout():
    """After the reader of stdout went away (`| head`), send what is still buffered nowhere, so
    that Python's flush at exit does not raise a second BrokenPipeError."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)


def main(argv=None):
    """Entry point of the console script; returns the exit code."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if not hasattr(args, "run"):
        parser.print_help(sys.stderr)
        return EXIT_USAGE
    try:
        code = args.run(args)
        sys.stdout.flush()
        return code
    except BrokenPipeError:
        _silence_stdout()
        return EXIT_BROKEN_PIPE
    except KeyboardInterrupt:
        if _debugging(args):
            raise
        print("interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except Exception as err:
        if _debugging(args):
            raise
        code, message = describe_error(err)
        hint = "" if code != EXIT_ERROR else " (run with --debug for the traceback)"
        print(f"error: {message}{hint}", file=sys.stderr)
        return code
