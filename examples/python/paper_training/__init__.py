"""The parts of examples/python/paper_a_training.py: model, runs, measures, summary, report."""
