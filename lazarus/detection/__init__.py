"""Detection: from log lines to a :class:`~lazarus.models.diagnosis.Diagnosis`, plus progress and hangs.

Pure Python, no Temporal imports; the telemetry activities and ``lazarus
diagnose`` both use it.

- :mod:`.catalogue` + ``signatures.yaml``: the signature catalogue, validated at load.
- :mod:`.engine` (:class:`~.engine.Analyzer`), :mod:`.candidate` and :mod:`.verdict` (:func:`~.verdict.conclude`):
  streaming analysis, what it remembers per signature, and root-cause choice.
- :mod:`.reader` (:func:`~.reader.diagnose_files`): whole files, streamed in blocks behind a prefilter.
- :mod:`.layout`, :mod:`.locate`, :mod:`.context`: naming the node a line is about.
- :mod:`.tail`: incremental tailing with a serialisable :class:`~.tail.TailState`.
- :mod:`.progress` and :mod:`.hang`: progress lines and the learned hang budget.
"""
