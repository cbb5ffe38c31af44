"""PDFs: typeset with known ground truth, and their text taken back out.

- ``typeset``: a :class:`~rag_lab.documents.Document` drawn as a PDF in one of the
  :data:`~.typeset.LAYOUTS` with reportlab, recording on which page each needle landed
  (a :class:`~.typeset.Placement`); ``scan`` turns a PDF into images with no text layer.
- ``extract``: a PDF's text page by page with pypdf, pdfminer.six or pypdfium2
  (:class:`~.extract.PdfText`, whose offsets map to pages), running headers and footers
  removed by repetition, and OCR with Tesseract.
- ``document``: what ``rag-lab index`` reads a PDF with (:func:`~.document.read_pdf`):
  the extracted pages cleaned, running lines removed, joined with their offsets kept, so
  a citation can say ``#page=N&char=s,e``.

The PDFs of notebook 11 are made at run time from the corpus and never committed. The
libraries are the ``pdf`` extra (``pip install 'rag_lab[pdf]'``, part of ``make setup``; OCR also
needs Debian's ``tesseract-ocr``), imported only when a function needs them.
"""
