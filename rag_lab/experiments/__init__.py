"""The chapter layer: one module per notebook (``nb01_…`` … ``nb13_…``, matching
``notebooks/NN_…``), the tables and figures only it shows, built from records of
:mod:`rag_lab.evaluation`; claim lines come from :mod:`rag_lab.claims.render`. Beside them:
``lab`` (the one setup call), ``findings`` (the claims ledger gathered and the README's
summary), ``present`` (findings, environment), ``reproduce`` (``make reproduce``) and
``pages`` (``make html``).

May import every other layer; nothing outside this folder imports it.
"""
