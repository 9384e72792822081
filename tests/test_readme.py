"""The README's code runs as written: its ```python blocks run in order in one namespace, and where a block
is followed by "prints" and a plain block, that is what it prints."""
import contextlib
import io
import os
import pathlib
import re

README = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "README.md")
FENCE = re.compile(r"^```(\w*)\n(.*?)^```\n", re.DOTALL | re.MULTILINE)


def blocks(text):
    """[(language, code, the output it is said to print or None)] for the fenced blocks of text."""
    found = [(m.group(1), m.group(2), m.start(), m.end()) for m in FENCE.finditer(text)]
    out = []
    for k, (lang, code, _, end) in enumerate(found):
        if lang != "python":
            continue
        printed = None
        if k + 1 < len(found) and found[k + 1][0] == "" and text[end:found[k + 1][2]].strip() == "prints":
            printed = found[k + 1][1]
        out.append((lang, code, printed))
    return out


def test_the_readme_has_python_blocks_and_no_stray_fences():
    text = pathlib.Path(README).read_text()
    assert len(blocks(text)) >= 4
    assert text.count("```") % 2 == 0
    assert "DESIGN.md" not in text      # users do not have it


def test_every_python_block_runs_in_order_and_prints_what_the_readme_says():
    namespace = {"__name__": "readme"}
    for k, (_, code, printed) in enumerate(blocks(pathlib.Path(README).read_text())):
        stdout = io.StringIO()
        with contextlib.redirect_stdout(stdout):
            exec(compile(code, f"README.md block {k}", "exec"), namespace)  # noqa: S102 - running the README is the test
        if printed is not None:
            assert stdout.getvalue().startswith(printed), f"block {k} printed:\n{stdout.getvalue()}"


def test_the_pictures_are_current(tmp_path, monkeypatch):
    """The README shows the SVGs that `python docs/make_pictures.py` draws; the .dot text beside each is what
    the command makes today, and the SVG was drawn from it (the same nodes)."""
    import re
    import sys
    docs = os.path.join(os.path.dirname(README), "docs")
    monkeypatch.syspath_prepend(docs)
    import make_pictures

    from tracejit.graph.__main__ import main as draw
    text = pathlib.Path(README).read_text()
    assert "`python docs/make_pictures.py`" in text
    assert set(make_pictures.PICTURES) == {"grad_traced", "grad_compiled"}
    for name, args in make_pictures.commands().items():
        assert f"(docs/{name}.svg)" in text
        assert draw([*args, "--format", "dot", "-o", str(tmp_path / f"{name}.dot")]) == 0
        dot = (tmp_path / f"{name}.dot").read_text()
        assert dot == pathlib.Path(docs, f"{name}.dot").read_text(), f"run python docs/make_pictures.py ({name})"
        svg = pathlib.Path(docs, f"{name}.svg").read_text()
        drawn = re.findall(r'<g id="node\d+" class="node">\s*<title>([^<]*)</title>', svg)
        assert sorted(drawn) == sorted(re.findall(r'^\s*"(\w+)" \[label=', dot, re.MULTILINE)) and drawn
    assert "--lowered" in make_pictures.commands()["grad_compiled"] and "cluster_group" in dot
    del sys.modules["make_pictures"], sys.modules["model"]
