"""PDFs: typeset with known ground truth, and their text taken back out.

- ``typeset``: a :class:`~rag_lab.documents.Document` drawn as a PDF in one of the
  :data:`~.typeset.LAYOUTS` with reportlab, recording on which page each needle landed
  (a :class:`~.typeset.Placement`); ``scan`` turns a PDF into images with no text layer.
- ``extract``: a PDF's text page by page with pypdf, pdfminer.six or pypdfium2
  (:class:`~.extract.PdfText`, whose offsets map to pages), running headers and footers
  removed by repetition, and OCR with Tesseract.

The PDFs are made at run time from the corpus and never committed. The libraries are the
optional ``pdf`` extra (``pip install -e .[pdf]``; OCR also needs Debian's
``tesseract-ocr``), imported only when a function needs them.
"""
