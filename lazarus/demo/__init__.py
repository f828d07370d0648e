"""The demo: a small distributed 'training' job (plain Python, no GPU) and the scenario driver."""
