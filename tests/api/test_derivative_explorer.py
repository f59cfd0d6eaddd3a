"""Issue 22, "a derivative explorer": ``s2s-ad FILE:f --html OUT.html`` and a gradient's notebook display
(``_repr_html_``) write one self-contained page: the user's function and the generated code side by side,
each generated line linked to the user's line it comes from and back, the tape's pushes and pops marked,
and the data-flow graph.

The page's structure is checked here always (every link lands on a line the page has, each generated
line's link is the user's line its ``# line N`` comment names, the marks sit on the tape's statements,
nothing is loaded from outside); ``test_clicks_highlight_in_a_real_browser`` loads it in headless
Chromium (the Debian package ``chromium``, which ``.ci/run`` installs), clicks lines and reads the
highlights back."""
from __future__ import annotations

import html
import inspect
import json
import re
import shutil
import subprocess
from html.parser import HTMLParser

import numpy as np
import pytest

import s2s_ad
from s2s_ad.api import cli
import visible_functions as vf


class _Lines(HTMLParser):
    """The page's lines (``id`` -> attributes, ``class`` split), its links, and what it would load."""

    def __init__(self) -> None:
        super().__init__()
        self.ids: dict[str, dict] = {}
        self.links: list[str] = []
        self.loads: list[str] = []
        self.nodes: list[dict] = []

    def handle_starttag(self, tag, attrs):
        attributes = dict(attrs)
        if "id" in attributes:
            self.ids[attributes["id"]] = attributes
        if tag == "a":
            self.links.append(attributes.get("href", ""))
        if tag == "g" and "node" in attributes.get("class", ""):
            self.nodes.append(attributes)
        for name in ("src", "href"):
            if name in attributes and not attributes[name].startswith("#"):
                self.loads.append(attributes[name])
        if tag == "link":
            self.loads.append(str(attributes))


def _parsed(page: str) -> _Lines:
    lines = _Lines()
    lines.feed(page)
    return lines


def _text_of(page: str, line_id: str) -> str:
    """The code on line ``line_id`` of the page, as the user reads it."""
    match = re.search(rf'id="{line_id}"[^>]*>(.*?)</span>(?=<span class="(?:line|gap)|</pre>)', page, re.S)
    assert match, line_id
    return html.unescape(re.sub(r"<[^>]+>", "", match.group(1)))


@pytest.fixture(scope="module")
def page() -> str:
    return s2s_ad.grad(vf.looped).html_for(0.7)


@pytest.fixture(scope="module")
def called_page() -> str:
    """The page of a gradient whose helper stays a call (``stepped_bump``, with a loop)."""
    return s2s_ad.grad(vf.looped_call).html_for(0.7)


def test_the_page_loads_nothing_from_outside(page):
    lines = _parsed(page)
    assert not lines.loads, lines.loads
    assert "<style>" in page and "<script>" in page and "@import" not in page and "url(" not in page


def _line_reading(fn, code: str) -> int:
    """The line of ``fn``'s file that reads ``code``."""
    lines, first = inspect.getsourcelines(fn)
    return next(n for n, text in enumerate(lines, first) if code in text)


@pytest.mark.parametrize("helper_called", [False, True])
def test_each_generated_line_links_to_the_users_line_its_comment_names_and_back(page, called_page, helper_called):
    """Inlined, the helper's lines link to its own lines in the user's file; called, its module's lines do."""
    fn, called = (vf.looped_call, "stepped_bump(x, y)") if helper_called else (vf.looped, "bump(x, y)")
    page = called_page if helper_called else page
    lines = _parsed(page)
    generated = {i: a for i, a in lines.ids.items() if i.startswith("g-")}
    users = {i: a for i, a in lines.ids.items() if i.startswith("u-")}
    assert generated and users
    linked = {i: a["data-user"] for i, a in generated.items() if a.get("data-user")}
    assert len(linked) > len(generated) // 2
    for g, u in linked.items():
        assert u in users, f"{g} links to {u}, which the page does not show"
        assert g in users[u]["data-generated"].split(), f"{u} does not link back to {g}"
        comment = re.search(r"# line (\d+)$", _text_of(page, g))
        if comment and g.startswith("g-0-"):  # the adjoint's own comments count in the user's file
            assert u.endswith(f"-{comment.group(1)}"), (g, u)
    for u, attributes in users.items():
        for g in attributes["data-generated"].split():
            assert generated[g]["data-user"] == u
    assert all(link[1:] in lines.ids for link in lines.links if link.startswith("#"))
    body = _line_reading(fn, f"s = s + {called} * x")
    assert f"s = s + {called} * x" in _text_of(page, f"u-0-{body}")
    assert len(users[f"u-0-{body}"]["data-generated"].split()) >= 2  # (grad's code: its adjoint statements)
    helper = _line_reading(vf.stepped_bump if helper_called else vf.bump, "v = np.sin(u) * k")
    assert f"u-0-{helper}" in linked.values()  # the helper's own line, called or in place
    assert any(g.startswith("g-1-") for g in linked) == helper_called  # the helper's module, where it is called


@pytest.mark.parametrize("helper_called", [True, False])
def test_the_tapes_pushes_and_pops_are_marked(page, called_page, helper_called):
    shown = called_page if helper_called else page  # looped's short helper is lowered in place: no call
    lines = _parsed(shown)
    marked = {i: a["class"].split()[1] for i, a in lines.ids.items() if i.startswith("g-")
              and len(a["class"].split()) > 1}
    kinds = set(marked.values())
    assert {"push", "pop", "helper"} <= kinds if helper_called else kinds == {"push", "pop"}
    for g, mark in marked.items():
        text = _text_of(shown, g).split("#")[0]
        if mark == "push":  # the list tape of the code that runs
            assert re.search(r"\btape\w*\.append\(.*\)\s*$", text), text
        elif mark == "pop":
            assert re.search(r" = tape\w*\.pop\(\)\s*$", text), text
        else:
            assert re.search(r"\.(forward|backward)\(.*tape", text), text


def test_the_data_flow_graph_is_drawn_and_linked(page):
    lines = _parsed(page)
    labels = re.findall(r'<text x="\d+" y="\d+">([^<]*)</text>', page)
    assert "prod = bump_x * x" in [html.unescape(label) for label in labels]
    assert page.count('class="adjoint"') >= 3 and page.count('class="edge"') >= 8
    assert all(node["data-user"] in lines.ids for node in lines.nodes if node["data-user"])


def test_higher_orders_hessians_and_the_notebook_display_have_pages():
    second = s2s_ad.grad(s2s_ad.grad(vf.looped_call)).html_for(0.7)
    assert "jvp_backward_stepped_bump" in second and 'class="line pop"' in second
    second = s2s_ad.grad(s2s_ad.grad(vf.looped)).html_for(0.7)
    assert "jvp_d_looped" in second and 'class="line pop"' in second
    hessian = s2s_ad.hessian(vf.shaped, wrt=("x", "w")).html_for(np.linspace(0.1, 0.4, 3), 0.5)
    assert "Hessian" in hessian and "tanh" in hessian
    gradient = s2s_ad.grad(vf.shaped)
    gradient(np.ones(3), 0.5)
    assert "array of shape (a,)" in gradient._repr_html_()


def test_cli_writes_the_page(tmp_path, capsys):
    out = tmp_path / "looped.html"
    code = cli.main([f"{vf.__file__}:looped", "--html", str(out), "--args", "0.7"])
    assert code == 0, capsys.readouterr().err
    assert out.read_text(encoding="utf-8") == s2s_ad.grad(vf.looped).html_for(0.7)
    code = cli.main([f"{vf.__file__}:looped", "--html", str(out), "--order", "2", "--wrt", "x"])
    assert code == 0 and "derivative_gradient_looped" in out.read_text(encoding="utf-8")


# -- in a real browser --------------------------------------------------------------------------------

_CLICKS = """<script>
function click(id) { document.getElementById(id).dispatchEvent(new MouseEvent('click', {bubbles: true})); }
function lit() { return Array.from(document.querySelectorAll('.hl')).map(function (e) { return e.id; }); }
var result = {};
click(%(generated)s); result.generated = lit();
click(%(user)s); result.user = lit();
click(%(node)s); result.node = lit();
document.body.setAttribute('data-result', JSON.stringify(result));
</script></body>"""


def _chromium() -> str:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        found = shutil.which(name)
        if found:
            return found
    pytest.skip("the explorer's browser test needs Chromium, which is not installed "
                "(Debian: apt-get install chromium; .ci/run installs it)")


@pytest.mark.browser
def test_clicks_highlight_in_a_real_browser(page, tmp_path):
    browser = _chromium()
    lines = _parsed(page)
    generated = next(i for i, a in lines.ids.items() if i.startswith("g-0-") and a.get("data-user"))
    user = lines.ids[generated]["data-user"]
    body = f"u-0-{vf.looped.__code__.co_firstlineno + 3}"
    node = next(n["id"] for n in lines.nodes if n["data-user"])
    clicks = _CLICKS % {"generated": json.dumps(generated), "user": json.dumps(body), "node": json.dumps(node)}
    path = tmp_path / "page.html"
    path.write_text(page.replace("</body>", clicks), encoding="utf-8")
    done = subprocess.run([browser, "--headless", "--no-sandbox", "--disable-gpu", "--dump-dom",
                           path.as_uri()], capture_output=True, text=True, timeout=120)
    match = re.search(r'data-result="([^"]*)"', done.stdout)
    assert match, f"the page's script did not run: {done.stderr[-2000:]}"
    result = json.loads(html.unescape(match.group(1)))
    assert sorted(result["generated"]) == sorted([generated, user])  # the line and the user's line it comes from
    made = lines.ids[body]["data-generated"].split()
    assert sorted(result["user"]) == sorted([body] + made)  # the user's line and every line made from it
    assert sorted(result["node"]) == sorted([node, lines.ids[node]["data-user"]])


def test_the_notebook_display_of_a_refused_function_says_why():
    def refused(x):
        try:
            return x
        except ValueError:
            return 0.0

    shown = s2s_ad.grad(refused)._repr_html_()
    assert shown.startswith("<pre>") and "try statement" in shown
