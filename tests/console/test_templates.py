"""Django's `{# #}` comment is one line only: one spread over several lines is not a comment
and is printed on the page as it is. A comment over several lines is `{% comment %}`."""
from pathlib import Path

from django.template.base import Lexer, TokenType

ROOT = Path(__file__).resolve().parents[2]


def template_files() -> list[Path]:
    return sorted([*(ROOT / "templates").rglob("*.html"), *ROOT.glob("console/*/templates/**/*.html")])


def unclosed_comments(text: str) -> list[int]:
    """The lines where a `{#` opens with no `#}` after it on the same line, as Django's own
    lexer reads the template: such a `{#` is left in the page's text."""
    lines = []
    for token in Lexer(text).tokenize():
        if token.token_type == TokenType.TEXT and "{#" in token.contents:
            before = token.contents[:token.contents.index("{#")]
            lines.append(token.lineno + before.count("\n"))
    return lines


def test_the_guard_finds_a_comment_over_two_lines():
    assert unclosed_comments("<p>a</p>\n{# one line #}\n{# two\n lines #}\n") == [3]
    assert unclosed_comments("{% comment %}two\nlines{% endcomment %}{# one #}") == []


def test_no_template_has_a_comment_over_several_lines():
    files = template_files()
    assert len(files) > 50 and any("console" in f.parts for f in files)
    found = [f"{f.relative_to(ROOT)}:{line}" for f in files for line in unclosed_comments(f.read_text())]
    assert found == [], "use {% comment %} ... {% endcomment %} for a comment over several lines"
