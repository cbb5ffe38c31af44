"""The corpus extractor: each cleaning rule on hand-made input, then the whole corpus."""

from __future__ import annotations

import hashlib
import textwrap

import pytest

from rag_lab.checksums import read_manifest
from rag_lab.sources.d2l.extract import EXTRACTOR_VERSION
from rag_lab.sources.d2l.extract.__main__ import main
from rag_lab.sources.d2l.extract.bib import (
    Reference,
    parse_bibliography,
    reference_from_key,
    render_citations,
)
from rag_lab.sources.d2l.extract.build import OUTPUT_MANIFEST, SOURCES, document_name, render_corpus
from rag_lab.sources.d2l.extract.code_blocks import clean_code_block, resolve_tab_branches
from rag_lab.sources.d2l.extract.d2lbook import (
    drop_directive_lines,
    drop_discussion_links,
    drop_images,
    remove_slide_marks,
    resolve_references,
    select_text_tabs,
    strip_html_comments,
    unmark_table_captions,
)
from rag_lab.sources.d2l.extract.document import render_document
from rag_lab.sources.d2l.extract.fences import Fence, Text, split_fences
from rag_lab.sources.d2l.extract.layout import normalise_whitespace, unwrap
from rag_lab.sources.d2l.extract.numbering import book_numbering
from rag_lab.sources.d2l.extract.upstream import configured_mirror


def _md(text: str) -> str:
    return textwrap.dedent(text).lstrip("\n")


def _python_cell(*body: str) -> Fence:
    return Fence("```{.python .input}", body)


# --- Fences --------------------------------------------------------------------------------


def test_fences_split_text_from_code_and_keep_an_unclosed_fence_to_the_end():
    segments = split_fences("intro\n```bash\nls\n```\nmiddle\n````text\n```\n````\n```python\nopen")
    assert segments == [
        Text(("intro",)),
        Fence("```bash", ("ls",)),
        Text(("middle",)),
        Fence("````text", ("```",)),
        Fence("```python", ("open",)),
    ]
    assert Fence("````text", ("```",)).lines() == ["````text", "```", "````"]


# --- Code blocks: tabs, branches, magics, #@save --------------------------------------------


@pytest.mark.parametrize(
    ("marker", "kept"),
    [
        ("%%tab pytorch", True),
        ("%%tab all", True),
        ("%%tab mxnet, pytorch, jax", True),
        ("#@tab pytorch, mxnet", True),
        ("#@tab all", True),
        ("%%tab mxnet", False),
        ("%%tab tensorflow, jax", False),
        ("#@tab mxnet", False),
    ],
)
def test_a_code_cell_is_kept_only_for_pytorch_or_all(marker, kept):
    cleaned = clean_code_block(_python_cell(marker, "x = 1"))
    assert cleaned == (Fence("```python", ("x = 1",)) if kept else None)


def test_an_unmarked_cell_is_the_default_pytorch_tab():
    assert clean_code_block(_python_cell("y = 2")) == Fence("```python", ("y = 2",))


def test_the_tab_setup_cell_and_toc_and_eval_rst_blocks_are_dropped():
    setup = _python_cell("%load_ext d2lbook.tab", "tab.interact_select(['mxnet', 'pytorch'])")
    assert clean_code_block(setup) is None
    assert clean_code_block(Fence("```toc", (":maxdepth: 2", "", "ndarray"))) is None
    assert clean_code_block(Fence("```eval_rst", (".. raw:: html",))) is None


def test_other_fences_are_kept_verbatim():
    bash = Fence("```bash", ("  pip install d2l  ", "%not a magic here"))
    assert clean_code_block(bash) is bash


def test_magics_save_marks_and_edge_blank_lines_go_and_an_emptied_cell_is_dropped():
    cell = _python_cell(
        "%%tab pytorch",
        "",
        "%matplotlib inline",
        "#@save",
        "def f():  #@save",
        "",
        "    return 1 % 2",
        "",
        "",
    )
    assert clean_code_block(cell) == Fence("```python", ("def f():", "", "    return 1 % 2"))
    assert clean_code_block(_python_cell("%%tab all", "%matplotlib inline", "")) is None


def test_tab_selected_branches_keep_the_pytorch_body_dedented():
    lines = [
        "class Net:",
        "    def __init__(self):",
        "        if tab.selected('mxnet', 'tensorflow'):",
        "            self.w = 0",
        "",
        "            self.v = 0",
        "        if tab.selected('pytorch') or tab.selected('jax'):",
        "            self.w = torch.zeros(1)",
        "",
        "            if ready:",
        "                go()",
        '        if tab.selected("pytorch"):',
        "            done = True",
        "        self.b = 1",
    ]
    assert resolve_tab_branches(lines) == [
        "class Net:",
        "    def __init__(self):",
        "        self.w = torch.zeros(1)",
        "",
        "        if ready:",
        "            go()",
        "        done = True",
        "        self.b = 1",
    ]


def test_branch_resolution_happens_inside_a_kept_cell():
    cell = _python_cell(
        "%%tab all",
        "if tab.selected('jax'):",
        "    import jax",
        "if tab.selected('pytorch', 'mxnet'):",
        "    import torch",
        "print(1)",
    )
    assert clean_code_block(cell) == Fence("```python", ("import torch", "print(1)"))


# --- Markdown rules --------------------------------------------------------------------------


def test_begin_tab_blocks_keep_pytorch_and_all_and_drop_the_rest_fences_included():
    segments = split_fences(
        _md(
            """
            Before.
            :begin_tab:`mxnet`
            MXNet text.
            ```bash
            pip install mxnet
            ```
            More MXNet.
            :end_tab:
            :begin_tab:`pytorch`
            PyTorch text.
            :end_tab:
            :begin_tab:`mxnet, pytorch`
            Shared text.
            :end_tab:
            :begin_tab:`all`
            Everyone.
            :end_tab:
            After.
            """
        )
    )
    assert select_text_tabs(segments) == [
        Text(("Before.",)),
        Text(("PyTorch text.", "Shared text.", "Everyone.", "After.", "")),
    ]


def test_html_comments_are_removed_even_over_several_lines():
    assert strip_html_comments("a <!-- one --> b\n<!--\ntwo\n-->c") == "a  b\nc"


def test_slide_marks_keep_bold_text_drop_slide_only_text_and_leave_bold_links():
    text = (
        "[**Shown.**] and (**also\nshown**) but [~~slide only~~] or (~~gone~~). "
        "A [**bold link**](https://d2l.ai) stays, then [**x**]."
    )
    assert remove_slide_marks(text) == (
        "Shown. and also\nshown but  or . A [**bold link**](https://d2l.ai) stays, then x."
    )


def test_references_use_the_numbering_and_an_unknown_label_stays_bare():
    numbering = {"sec_a": "Section 3.2.4", "eq_b": "(3.1.5)", "fig_c": "Fig. 3.1.2"}
    text = "See :numref:`sec_a`, :eqref:`eq_b`, :ref:`fig_c`, :numref:``sec_a`` and :numref:`nope`."
    assert resolve_references(text, numbering) == (
        "See Section 3.2.4, (3.1.5), Fig. 3.1.2, Section 3.2.4 and nope."
    )


def test_directive_lines_are_dropped_whole():
    text = (
        "# T\n:label:`sec_t`\n\n$$x$$\n:eqlabel:`eq_x`\n"
        "  :width:`400px`\n:height:`3cm`\nkept :label:`inline`"
    )
    assert drop_directive_lines(text) == "# T\n\n$$x$$\nkept :label:`inline`"


def test_image_lines_are_dropped_even_with_a_caption_over_several_lines():
    text = _md(
        """
        Before.
        ![One line.](../img/a.svg)
        ![First caption line,
        second line with $x_i$,
        last line.](../img/b.svg)
        Text with an inline ![icon](i.png) stays.
        """
    )
    assert drop_images(text) == "Before.\nText with an inline ![icon](i.png) stays.\n"


def test_a_table_caption_loses_its_colon_but_roles_do_not():
    text = ":Dataset vs. computer memory\n: Spaced caption\n:label:`tab_x`\nratio 1:2"
    assert unmark_table_captions(text) == (
        "Dataset vs. computer memory\nSpaced caption\n:label:`tab_x`\nratio 1:2"
    )


def test_discussion_links_are_dropped_and_other_links_kept():
    text = "[Discussions](https://discuss.d2l.ai/t/27)\n[Discussions](https://example.com/t/1)\n"
    assert drop_discussion_links(text) == "[Discussions](https://example.com/t/1)\n"


# --- Numbering -------------------------------------------------------------------------------


@pytest.fixture
def tiny_book(tmp_path):
    """Two numbered chapters; the second has two sections, the last one fully labelled."""
    files = {
        "index.md": "```toc\n:maxdepth: 1\n\nchapter_preface/index\n```\n\n"
        "```toc\n:maxdepth: 2\n:numbered:\n\nchapter_one/index\nchapter_two/index\n```\n",
        "chapter_preface/index.md": "# Preface\n:label:`chap_preface`\n",
        "chapter_one/index.md": "# One\n:label:`chap_one`\n",
        # A stray ".md" in a toc entry still names the document, as Sphinx reads it.
        "chapter_two/index.md": "# Two\n:label:`chap_two`\n\n"
        "```toc\n:maxdepth: 2\n\nfirst\nsecond.md\n```\n",
        "chapter_two/first.md": "# First\n\n:label:`sec_first`\n\n![A figure.](a.svg)\n",
        "chapter_two/second.md": _md(
            """
            # Second
            :label:`sec_second`

            ```python
            ## not a heading
            ```

            ## Alpha
            :label:`subsec_alpha`

            ![](../img/no-caption.svg)

            ![Counted.](../img/a.svg)
            :width:`300px`
            :label:`fig_counted`

            $$y = x$$
            :eqlabel:`eq_first`

            ## Beta

            ### Beta one
            :label:`subsec_beta_one`

            ![A caption
            over three lines,
            with $x$.](../img/b.svg)
            :label:`fig_second`

            $$z = 1$$
            :eqlabel:`eq_second`

            | a |
            |---|
            :Caption of the table
            :label:`tab_numbers`

            Prose.
            :label:`orphan`
            """
        ),
    }
    for name, text in files.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return tmp_path


def test_the_book_numbering_follows_the_tocs_headings_and_per_file_counters(tiny_book):
    assert book_numbering(tiny_book) == {
        "chap_one": "Section 1",
        "chap_two": "Section 2",
        "sec_first": "Section 2.1",
        "sec_second": "Section 2.2",
        "subsec_alpha": "Section 2.2.1",
        "fig_counted": "Fig. 2.2.1",
        "eq_first": "(2.2.1)",
        "subsec_beta_one": "Section 2.2.2.1",
        "fig_second": "Fig. 2.2.2",
        "eq_second": "(2.2.2)",
        "tab_numbers": "Table 2.2.1",
    }


# --- Citations -------------------------------------------------------------------------------

_BIB = r"""
@Book{	  Golub.Van-Loan.1996,
  title		= {Matrix {C}omputations},
  author	= {Golub, Gene H and Van Loan, Charles F},
  year		= {1996}
}

@InProceedings{	  Bottou.Le-Cun.1988,
  author	= {Bottou, {L\'eon} and {Le Cun}, Yann},
  year		= 1988,
}

@book{Vapnik98,
  Author =	 {V.~N. Vapnik},
  Title =	 {Statistical Learning Theory},
  Year =	 1998
}

@article{scholkopf,
  author={Sch{\"o}lkopf, Bernhard and Smola, Alexander J and
          Williamson, Robert and {Barnes and Noble}},
  year={2002},
}

@misc{no_author,
  title = {Anonymous},
  year = {2000}
}
"""


def test_the_bibliography_gives_surnames_and_years():
    bib = parse_bibliography(_BIB)
    assert bib == {
        "Golub.Van-Loan.1996": Reference(("Golub", "Van Loan"), "1996"),
        "Bottou.Le-Cun.1988": Reference(("Bottou", "Le Cun"), "1988"),
        "Vapnik98": Reference(("Vapnik",), "1998"),
        "scholkopf": Reference(("Scholkopf", "Smola", "Williamson", "Barnes and Noble"), "2002"),
    }


def test_citations_name_one_two_or_first_author_et_al():
    bib = parse_bibliography(_BIB)
    text = (
        ":cite:`Vapnik98` :cite:`Golub.Van-Loan.1996, scholkopf` "
        ":citet:`scholkopf` :citet:`Vapnik98,Bottou.Le-Cun.1988`"
    )
    assert render_citations(text, bib) == (
        "(Vapnik, 1998) (Golub and Van Loan, 1996; Scholkopf et al., 2002) "
        "Scholkopf et al. (2002) Vapnik (1998); Bottou and Le Cun (1988)"
    )


def test_a_key_missing_from_the_bibliography_is_read_as_surnames_and_year():
    assert reference_from_key("Smith.2001") == Reference(("Smith",), "2001")
    assert reference_from_key("Smith.Jones.2001").authors == "Smith and Jones"
    assert reference_from_key("Smith.Jones.ea.2001").authors == "Smith et al."
    assert reference_from_key("Smith.ea.2001").authors == "Smith et al."
    assert reference_from_key("unreadable") == Reference(("unreadable",), "")
    text = ":cite:`Zhang.ea.1988,unreadable` and :citet:`A.B.C.1999`"
    assert render_citations(text, {}) == "(Zhang et al., 1988; unreadable) and A et al. (1999)"


# --- Unwrapping and whitespace ---------------------------------------------------------------


def test_unwrapping_joins_prose_and_list_items_but_not_blocks():
    text = _md(
        """
        # Title
        Not joined to the heading,
          but this is.
        * item one
          continues
        1. numbered
        > quote
        <div>
        html stays
        </div>
        | a | b |
        | c | d |
        after the table
        joined.
        """
    )
    assert unwrap(text) == _md(
        """
        # Title
        Not joined to the heading, but this is.
        * item one continues
        1. numbered
        > quote
        <div>
        html stays
        </div>
        | a | b |
        | c | d |
        after the table joined.
        """
    )


def test_unwrapping_leaves_code_and_display_math_intact():
    text = _md(
        """
        Text before
        ```python
        x = 1
        y = 2
        ```
        text after
        $$\\begin{aligned}
        a &= b \\\\
        c &= d
        \\end{aligned}$$
        more text
        $$x = 1.$$
        end
           $$y = 2.$$
        """
    )
    assert unwrap(text) == text


def test_whitespace_is_normalised_from_the_title_on():
    text = (
        "setup residue\n```python\n# a comment, not the title\n```\n\n"
        "# Title  \n\n\n\nBody\t\n\n\n```python\nx = 1   \n```\n\n\n"
    )
    assert normalise_whitespace(text) == "# Title\n\nBody\n\n```python\nx = 1\n```\n"


# --- One document, all rules together --------------------------------------------------------


def test_a_small_source_renders_with_all_rules_in_order():
    source = _md(
        """
        ```{.python .input}
        %load_ext d2lbook.tab
        tab.interact_select(['mxnet', 'pytorch'])
        ```

        # Tensors
        :label:`sec_t`

        <!-- a note -->
        (**Tensors hold
        numbers**) as in :numref:`sec_t`
        :cite:`Vapnik98`.

        ![A figure.](../img/t.svg)
        :label:`fig_t`

        :begin_tab:`mxnet`
        MXNet only.
        :end_tab:

        ```{.python .input}
        %%tab mxnet
        x = np.arange(3)
        ```

        ```{.python .input}
        %%tab pytorch
        x = torch.arange(3)  #@save
        ```

        [Discussions](https://discuss.d2l.ai/t/27)
        """
    )
    rendered = render_document(source, {"sec_t": "Section 2.1"}, parse_bibliography(_BIB))
    assert rendered == (
        "# Tensors\n\nTensors hold numbers as in Section 2.1 (Vapnik, 1998).\n\n"
        "```python\nx = torch.arange(3)\n```\n"
    )


# --- The real corpus -------------------------------------------------------------------------


def test_document_names_follow_the_output_manifest():
    names = [document_name(i, source) for i, source in enumerate(SOURCES, start=1)]
    assert names == list(read_manifest(OUTPUT_MANIFEST))
    assert names[2] == "03-linear-algebra.md"


def test_the_extractor_version_is_a_non_empty_string():
    assert isinstance(EXTRACTOR_VERSION, str) and EXTRACTOR_VERSION


@pytest.fixture
def mirror():
    found = configured_mirror()
    if found is None or not found.is_dir():
        pytest.skip("no upstream mirror ($RAG_LAB_MIRROR or ../shared/corpus/d2l-en/raw)")
    return found


@pytest.mark.corpus
def test_the_whole_corpus_rebuilds_byte_for_byte_from_the_mirror(mirror, tmp_path, capsys):
    assert main(["--mirror", str(mirror), "--out", str(tmp_path)]) == 0
    expected = read_manifest(OUTPUT_MANIFEST)
    actual = {name: hashlib.sha256((tmp_path / name).read_bytes()).hexdigest() for name in expected}
    assert actual == expected
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([*expected, "SOURCE.md"])
    out = capsys.readouterr().out
    assert f"mirror {mirror}; 194 files verified" in out
    assert "20 documents written" in out


@pytest.mark.corpus
def test_a_second_run_finds_the_corpus_current_and_force_rebuilds(mirror, tmp_path, capsys):
    assert main(["--mirror", str(mirror), "--out", str(tmp_path)]) == 0
    capsys.readouterr()
    assert main(["--mirror", str(mirror), "--out", str(tmp_path)]) == 0
    assert "nothing to do" in capsys.readouterr().out
    assert main(["--mirror", str(mirror), "--out", str(tmp_path), "--force"]) == 0
    assert "20 documents written" in capsys.readouterr().out


@pytest.mark.corpus
def test_a_document_that_renders_differently_is_reported_by_name(
    mirror, tmp_path, monkeypatch, capsys
):
    monkeypatch.setattr(
        "rag_lab.sources.d2l.extract.build.render_corpus",
        lambda root: {**render_corpus(root), "02-pandas.md": "# Pandas, altered\n"},
    )
    assert main(["--mirror", str(mirror), "--out", str(tmp_path)]) == 1
    err = capsys.readouterr().err
    expected = read_manifest(OUTPUT_MANIFEST)["02-pandas.md"]
    altered = hashlib.sha256(b"# Pandas, altered\n").hexdigest()
    assert f"02-pandas.md: sha256 mismatch (expected {expected}, got {altered})" in err
    assert "01-ndarray.md" not in err
