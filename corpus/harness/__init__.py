"""The corpus harness: holds every program of corpus/programs to tfdet's promises,
each run in fresh processes (see corpus/README.md).

    python -m corpus.harness [--programs a,b] [--promises a,b,...] [--out corpus/results.jsonl] [--table]
"""
