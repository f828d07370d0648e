"""Detection: from log lines to a :class:`~lazarus.models.diagnosis.Diagnosis`, plus progress and hangs.

Pure Python, no Temporal imports; the telemetry activities and ``lazarus
diagnose`` both use it.

- :mod:`.catalogue` + ``signatures.yaml``: the signature catalogue, validated at load.
- :mod:`.engine` (:class:`~.engine.Analyzer`) and :mod:`.verdict`: streaming analysis and root-cause choice.
- :mod:`.reader` (:func:`~.reader.diagnose_files`): whole files, streamed in blocks behind a prefilter.
- :mod:`.layout`, :mod:`.locate`, :mod:`.context`: naming the node a line is about.
- :mod:`.tail`: incremental tailing with a serialisable :class:`~.tail.TailState`.
- :mod:`.progress` and :mod:`.hang`: progress lines and the learned hang budget.
"""
