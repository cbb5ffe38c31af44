"""Where documents come from, each turned into :class:`rag_lab.documents.Document` records.

- ``d2l``: the lab's corpus, *Dive into Deep Learning* chapters 2–4, verified by checksum;
  ``d2l.extract`` rebuilds it from the book's upstream sources.
- ``folder``: a user's folder of Markdown and plain-text files.
- ``chroma``: Chroma's chunking benchmark (five corpora, 472 questions answered by
  excerpts given as offsets), verified by checksum; ``chroma.fetch`` downloads it.
- ``pdf``: PDFs typeset from documents with known needle pages (``pdf.typeset``) and read
  back page by page by pypdf, pdfminer.six, pypdfium2 or Tesseract (``pdf.extract``); the
  optional ``pdf`` extra.

May import the core (``rag_lab.*``); never ``models``, ``app`` or ``experiments``.
"""
