"""Executed notebooks as a reader gets them: what papermill and the machine added, taken out.

    python -m tokgen_tools.clean notebooks/*.ipynb slice/notebooks/*.ipynb solutions/*.ipynb

The runner applies `clean` to every notebook it has executed before that notebook replaces the
committed one; `problems` lists what a committed notebook must not hold (tests/test_notebooks.py).
A cleaned notebook has no injected-parameters cell: the values a run gave (-p, a slice's sizes,
the smoke sizes) are written into the notebook's own parameters cell instead, each line keeping
its comment. The runner's folders (RESULTS_DIR, DATA_DIR, SLICE_RESULTS_DIR) are not written
there: the committed notebook, opened and run as is, writes below its default, build/lab. A
notebook the runner wrote elsewhere (a smoke run, --out) shows the folders it wrote to and read
from where they lie beside it (`folders`): RESULTS_DIR "..", its own results folder.
"""

import ast
import json
import os
import re
import sys

import nbformat
from papermill.translators import PythonTranslator

FOLDERS = {"RESULTS_DIR", "DATA_DIR", "SLICE_RESULTS_DIR"}  # where the runner's staging copy is
FOLDER_COMMENT = "  # this run's results folder, relative to this notebook's folder"
INJECTED = "injected-parameters"
RUN_METADATA = ("papermill", "execution")  # per cell: papermill's status and timings, the kernel's timestamps
# a path of the machine that ran the notebook; prose may show a command such as `--out /tmp/mine`, so
# markdown cells are checked for every prefix but /tmp
MACHINE_PATH = re.compile(r"(?<![\w.~-])/(?:work|root|home|opt|usr|tmp)/[\w.+-]|\bstaging-\w")
MACHINE_PATH_IN_PROSE = re.compile(r"(?<![\w.~-])/(?:work|root|home|opt|usr)/[\w.+-]|\bstaging-\w")
WARNING = re.compile(r"^.*Warning.*\n?(?:[ \t]+.*\n?)*", re.M)  # a warning's line and its indented source lines
# inductor's autotuning log (mode="max-autotune"): candidates that do not fit the GPU and the timing
# table of every product; torch internals, not the notebook's output. dynamo's own log records
# (a recompile limit hit) stay: notebooks teach from them.
AUTOTUNE_LOG = re.compile(
    r"^[EW]\d{4} \S+ +\d+ \S*_inductor/select_algorithm\.py:\d+\].*\n?"  # a rejected candidate
    r"|^(?:Autotune Choices Stats:\n.*\n)?AUTOTUNE \w+\(.*\n(?:(?:strides|dtypes):.*\n|  .*\n)*"  # a table
    r"(?:\w* ?AUTOTUNE benchmarking takes.*\n?)?",
    re.M,
)
TEXTS = {"text/markdown", "text/plain"}  # the outputs' text forms that are cleaned of install paths
IMAGES = {"image/png", "image/jpeg", "image/gif"}  # base64: letters, not paths
INSTALLED = re.compile(r"/[^\s'\"()]*/((?:site|dist)-packages)/")  # where this machine installed a package


def injected_values(nb) -> dict:
    """The values papermill injected, read back from its injected-parameters cell."""
    values = {}
    for cell in nb.cells:
        if INJECTED in cell.metadata.get("tags", []):
            for node in ast.parse(cell.source).body:
                if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name):
                    values[node.targets[0].id] = ast.literal_eval(node.value)
    return values


def _split_comment(line: str) -> tuple[str, str]:
    """`NAME = value  # comment` -> ("NAME = value", "  # comment"): the first '#' after which
    the code still parses (a '#' inside a string is not a comment)."""
    for m in re.finditer(r"\s*#", line):
        try:
            ast.parse(line[: m.start()])
        except SyntaxError:
            continue
        return line[: m.start()], line[m.start() :]
    return line, ""


def _same(code: str, value) -> bool:
    try:
        return ast.literal_eval(code.strip()) == value
    except (ValueError, SyntaxError):  # an expression: rewritten as the value it ran with
        return False


def write_parameters(nb, values: dict, folders: bool = False) -> None:
    """Write `values` (folders left out, or with `folders` the relative ones, with a comment saying
    what they are) into the notebook's parameters cell, line by line, keeping each line's comment;
    a value the cell does not declare is added at its end."""
    shown = lambda k, v: k not in FOLDERS or (folders and isinstance(v, str) and not v.startswith("/"))
    values = {k: v for k, v in values.items() if shown(k, v)}
    cell = next((c for c in nb.cells if "parameters" in c.metadata.get("tags", [])), None)
    if cell is None or not values:
        return
    lines, written = [], set()
    for line in cell.source.splitlines():
        code, comment = _split_comment(line)
        name, _, old = code.partition(" = ")
        if name in values:
            written.add(name)
            if name in FOLDERS:  # its comment speaks of the committed notebook's folders
                line = f"{name} = {PythonTranslator.translate(values[name])}{FOLDER_COMMENT}"
            elif not _same(old, values[name]):  # an unchanged value keeps its spelling
                line = f"{name} = {PythonTranslator.translate(values[name])}{comment}"
        lines.append(line)
    lines += [
        f"{k} = {PythonTranslator.translate(v)}  # set by this run" for k, v in values.items() if k not in written
    ]
    cell.source = "\n".join(lines)


def without_warnings(text: str) -> str:
    """Stderr text less its warnings (a line naming a ...Warning and the indented lines under it)."""
    return WARNING.sub("", text)


def without_autotune_log(text: str) -> str:
    """Stderr text less inductor's autotuning log (see AUTOTUNE_LOG)."""
    return AUTOTUNE_LOG.sub("", text)


def without_install_paths(text: str, search_path: list[str] | None = None) -> str:
    """A library's file named from its package folder: /x/.venv/lib/python3.12/site-packages/torch/a.py
    -> site-packages/torch/a.py, and a file under another folder of Python's search path (a
    PYTHONPATH entry such as /tmp/site) named from that folder: /tmp/site/transformers/a.py ->
    transformers/a.py (a log line of torch names the file it comes from). The search path is this
    process's and the kernels' (PYTHONPATH now: run_all puts --newest-transformers first there)."""
    text = INSTALLED.sub(r"\1/", text)
    if search_path is None:
        search_path = sys.path + os.environ.get("PYTHONPATH", "").split(os.pathsep)
    folders = [p.rstrip("/") for p in search_path if len(p) > 1 and p[0] == "/"]
    for folder in sorted(folders, key=len, reverse=True):  # the deepest first: /a/b before /a
        text = text.replace(folder + "/", "")
    return text


def clean(nb, values: dict | None = None, folders: bool = False):
    """Make an executed notebook a reader's: the run's values (default: the injected cell's) in
    its parameters cell, no injected cell, no papermill or execution metadata, no warnings on
    stderr, library files named from their package folder (in streams and in text results).
    `folders`: show the run's relative folders (`write_parameters`). Changes `nb` in place and returns it."""
    write_parameters(nb, injected_values(nb) if values is None else values, folders)
    nb.cells = [c for c in nb.cells if INJECTED not in c.metadata.get("tags", [])]
    nb.metadata.pop("papermill", None)
    for cell in nb.cells:
        for key in RUN_METADATA:
            cell.metadata.pop(key, None)
        if cell.cell_type == "code":
            for out in cell.outputs:
                if out.get("output_type") == "stream":
                    out.text = without_install_paths(out.text)
                for kind in TEXTS & set(out.get("data", {})):  # a Markdown or plain-text result may name a file too
                    text = out.data[kind]
                    out.data[kind] = without_install_paths(text if isinstance(text, str) else "".join(text))
                if out.get("output_type") == "stream" and out.get("name") == "stderr":
                    out.text = without_autotune_log(without_warnings(out.text))
            cell.outputs = [o for o in cell.outputs if o.get("name") != "stderr" or o.text.strip()]
    return nb


def _machine_paths(text: str, pattern=MACHINE_PATH) -> list[str]:
    return [m.group(0) for m in pattern.finditer(text)]


def problems(nb) -> list[str]:
    """What a committed notebook must not hold, one line each: an injected cell, run metadata,
    error outputs, warnings or inductor's autotuning log on stderr, paths of the machine that ran it."""
    found = ["papermill metadata in the notebook's metadata"] if "papermill" in nb.metadata else []
    found += [f"machine path in the notebook's metadata: {p}" for p in _machine_paths(json.dumps(nb.metadata))]
    for i, cell in enumerate(nb.cells):
        where = f"cell {i} ({cell.cell_type})"
        if INJECTED in cell.metadata.get("tags", []):
            found.append(f"{where}: papermill's injected-parameters cell")
        found += [f"{where}: {key} metadata" for key in RUN_METADATA if key in cell.metadata]
        pattern = MACHINE_PATH_IN_PROSE if cell.cell_type == "markdown" else MACHINE_PATH
        found += [f"{where}: machine path in its source: {p}" for p in _machine_paths(cell.source, pattern)]
        found += [f"{where}: machine path in its metadata: {p}" for p in _machine_paths(json.dumps(cell.metadata))]
        for out in cell.get("outputs", []):
            if out.get("output_type") == "error":
                found.append(f"{where}: an error output ({out.get('ename')})")
            if out.get("name") == "stderr" and "Warning" in out.get("text", ""):
                found.append(f"{where}: a warning on stderr: {out.text.strip().splitlines()[0][:120]}")
            if out.get("name") == "stderr" and AUTOTUNE_LOG.search(out.get("text", "")):
                found.append(f"{where}: inductor's autotuning log on stderr")
            text = {k: v for k, v in out.items() if k not in ("data", "metadata")} | {
                k: v for k, v in out.get("data", {}).items() if k not in IMAGES
            }
            found += [f"{where}: machine path in an output: {p}" for p in _machine_paths(json.dumps(text))]
    return found


def main(paths: list[str]) -> int:
    """Clean notebooks in place (the one-off for committed ones); print what cleaning cannot fix."""
    left = 0
    for path in paths:
        nb = clean(nbformat.read(path, as_version=4))
        nbformat.write(nb, path)
        for problem in problems(nb):
            print(f"{path}: {problem}")
            left += 1
    return 1 if left else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
