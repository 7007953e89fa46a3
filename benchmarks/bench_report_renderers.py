"""The report renderers written in Python against the same renderer written as Jinja2 templates.

Both render ``summary.md`` from the committed ``reports/reference/results.json`` through the one
document model (``attnproof.report.document``), and must agree byte for byte. Printed: lines of code
of each (non-blank, non-comment), and the render time of each as a ratio, best of 7 in one run
(the machine is shared and noisy, so only ratios from the same run mean anything).

This is the measurement behind keeping the renderers in Python: templates would not shrink
them (the model already holds the structure, so a renderer is a dispatch on node types), and
Jinja2's escaping is HTML's, so every Markdown and LaTeX value would still need our own filter.

Run: python benchmarks/bench_report_renderers.py
"""

from __future__ import annotations

import inspect
from pathlib import Path

import jinja2
from _timing import best_of  # benchmarks run as scripts: their folder is on sys.path

from attnproof.report import document as doc
from attnproof.report import load_results, markdown, view
from attnproof.report.figures import Figures

RESULTS = Path(__file__).resolve().parent.parent / "reports" / "reference" / "results.json"

TEMPLATE = r"""
{%- macro inline(p) -%}
{%- set k = kind(p) -%}
{%- if k == "Text" -%}{{ p.text | spaced }}
{%- elif k in ("Strong", "Alert") -%}**{{ p.text | md }}**
{%- elif k == "Emph" -%}_{{ p.text | md }}_
{%- elif k == "Code" -%}{{ p.text | code }}
{%- elif k == "Math" -%}{{ p.latex | math }}
{%- elif k == "Link" -%}[{{ p.name | md }}](#{{ p.name | anchor }})
{%- elif k == "Status" -%}{{ marks.get(p.status, "") }} {% if p.strong %}**{{ p.text | md }}**
{%- else %}{{ p.text | md }}{% endif %}
{%- elif k == "FigureRef" -%}[Figures](#figures)
{%- endif -%}
{%- endmacro -%}

{%- macro line(l) -%}{% for p in l %}{{ inline(p) }}{% endfor %}{%- endmacro -%}

{%- macro table(t) -%}
| {% for c in t.columns %}{{ c.title | md }}{{ " | " if not loop.last }}{% endfor %} |
|{% for c in t.columns %}{{ "---:|" if c.numeric else "---|" }}{% endfor %}
{%- for row in t.rows %}
| {% for cell in row %}{{ line(cell) }}{{ " | " if not loop.last }}{% endfor %} |
{%- endfor %}
{%- endmacro -%}

{%- macro fenced(text, info="") -%}
{%- set f = fence(text) -%}
{{ f }}{{ info }}
{{ text | lines }}
{{ f }}
{%- endmacro -%}

{%- macro block(b) -%}
{%- set k = kind(b) -%}
{%- if k == "Paragraph" -%}{{ line(b.line) }}
{%- elif k == "Lines" -%}
{%- for l in b.lines %}{{ line(l) }}{{ "  \n" if not loop.last }}{% endfor %}
{%- elif k == "Fields" -%}
{%- for label, value in b.items -%}
**{{ label | md }}:** {{ line(value) }}{{ "  \n" if not loop.last }}
{%- endfor -%}
{%- elif k == "Quote" -%}> {{ line(b.line) }}
{%- elif k == "Statement" -%}
{%- if kind(b.claim) == "Math" %}{{ fenced(b.claim.latex | flat, "math") }}
{%- else %}{{ inline(b.claim) }}{% endif %}
{%- if b.definitions %}

where {% for d in b.definitions %}{{ inline(d) }}{{ ", " if not loop.last }}{% endfor %}
{%- endif -%}
{%- elif k == "Table" -%}{{ table(b) }}
{%- elif k == "Bullets" -%}
{%- if b.items | selectattr("body") | list -%}
{%- for item in b.items %}- {{ line(item.line) }}
{%- for inner in item.body %}

{{ block(inner) | indent(2, first=True, blank=True) }}
{%- endfor %}{{ "\n\n" if not loop.last }}
{%- endfor -%}
{%- else -%}
{%- for item in b.items %}- {{ line(item.line) }}{{ "\n" if not loop.last }}{% endfor -%}
{%- endif -%}
{%- elif k == "Listing" -%}{{ fenced(b.text | visible, b.language) }}
{%- elif k == "Figure" -%}{{ b.caption | md }}

![{{ b.alt | md }}]({{ b.stem }}.png)
{%- endif -%}
{%- endmacro -%}

{%- macro section(s, level) -%}
{{ "#" * level }} {{ s.title | md }}
{%- for b in s.blocks %}

{{ block(b) }}
{%- endfor %}
{%- for c in s.children %}

{{ section(c, level + 1) }}
{%- endfor %}
{%- endmacro -%}

# {{ d.title | md }}

{{ d.byline | md }}
{%- if d.warning %}

> [!WARNING]
> {{ line(d.warning) }}
{%- endif %}
{%- for s in d.sections %}

{{ section(s, 2) }}
{%- endfor %}
"""


def _fence(text: str) -> str:
    import re
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    return "`" * max(3, longest + 1)


def jinja_environment() -> jinja2.Environment:
    env = jinja2.Environment(autoescape=False, undefined=jinja2.StrictUndefined)
    env.filters.update(md=markdown.escape, code=markdown.code, math=markdown.math,
                       anchor=view.anchor, spaced=lambda t: doc.spaced(t, markdown.escape),
                       flat=lambda t: " ".join(t.split()),
                       visible=lambda t: doc.visible(t, keep_newlines=True),
                       lines=lambda t: "\n".join(t.splitlines()))
    env.globals.update(kind=lambda node: type(node).__name__, fence=_fence,
                       marks=markdown._MARKS)
    return env


def render_with_jinja(template: jinja2.Template, document: doc.Document) -> str:
    return template.render(d=document) + "\n"


def code_lines(text: str) -> int:
    """Non-blank lines that are not comments or docstrings' prose (counted roughly: lines
    inside triple-quoted blocks at the module's top and functions' tops are skipped)."""
    count, in_doc = 0, False
    for raw in text.splitlines():
        line = raw.strip()
        quotes = line.count('"""')
        if in_doc or (quotes and line.startswith('"""')):
            in_doc = in_doc != (quotes % 2 == 1)
            continue
        if line and not line.startswith("#"):
            count += 1
    return count


def main() -> None:
    report = load_results(RESULTS)
    figures = Figures(error_bits=("figures/error_bits",), temperature="figures/temperature")
    template = jinja_environment().from_string(TEMPLATE)
    document = doc.build(report, figures)
    python_text = markdown.text(document)
    jinja_text = render_with_jinja(template, document)
    print(f"outputs identical: {python_text == jinja_text}")
    shared = (markdown.escape, markdown.code, markdown.math)  # the template reuses these
    python_lines = code_lines(inspect.getsource(markdown)) - sum(
        code_lines(inspect.getsource(f)) for f in shared)
    glue = inspect.getsource(jinja_environment) + inspect.getsource(render_with_jinja) + \
        inspect.getsource(_fence)
    # Both count only the renderer: Python's escape, code and math are reused by the template.
    jinja_lines = len([x for x in TEMPLATE.splitlines() if x.strip()]) + code_lines(glue)
    print(f"Markdown renderer, lines of code: Python {python_lines}, Jinja2 template + glue "
          f"{jinja_lines} (both use the same escape, code and math)")
    build_time = best_of(lambda: doc.build(report, figures))
    python_time = best_of(lambda: markdown.text(document))
    jinja_time = best_of(lambda: render_with_jinja(template, document))
    print(f"over {RESULTS.name} ({len(report.theorems)} theorems): building the model "
          f"{build_time * 1e3:.1f} ms; rendering it: Python {python_time * 1e3:.1f} ms, "
          f"Jinja2 {jinja_time * 1e3:.1f} ms, Jinja2/Python = {jinja_time / python_time:.2f}")


if __name__ == "__main__":
    main()
