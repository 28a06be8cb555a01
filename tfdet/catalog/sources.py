"""Citations in the catalogue ('kind:reference') turned into labels and links."""

_TF = "https://github.com/tensorflow/tensorflow"
_FWR13Y = "https://github.com/NVIDIA/framework-reproducibility"

def _blob(repo, prefix):
    """A file link; 'path@commit#L1-L9' pins the commit and lines (markdown is
    shown as plain text there, where GitHub's line anchors work)."""
    def link(ref):
        path, _, anchor = ref.partition("#")
        path, _, commit = path.partition("@")
        plain = "?plain=1" if commit and path.endswith(".md") and anchor.startswith("L") else ""
        return "%s/blob/%s/%s%s%s%s" % (repo, commit or "master", prefix, path, plain, "#" + anchor if anchor else "")
    return link


_LINKS = {
    "tf-release": lambda ref: "%s/releases/tag/v%s.0" % (_TF, ref),
    "tf-pr": lambda ref: "%s/pull/%s" % (_TF, ref),
    "tf-issue": lambda ref: "%s/issues/%s" % (_TF, ref),
    "tf-commit": lambda ref: "%s/commit/%s" % (_TF, ref),
    "tf-source": _blob(_TF, ""),
    "tf-test": _blob(_TF, ""),
    "fwr13y-doc": _blob(_FWR13Y, "doc/d9m/"),
    "fwr13y-issue": lambda ref: "%s/issues/%s" % (_FWR13Y, ref),
    "fwr13y-pr": lambda ref: "%s/pull/%s" % (_FWR13Y, ref),
    "horovod-pr": lambda ref: "https://github.com/horovod/horovod/pull/%s" % ref,
    "doc": lambda ref: ref,
}

_LABELS = {
    "tf-release": "TF %s release notes",
    "tf-pr": "TF PR %s",
    "tf-issue": "TF issue %s",
    "tf-commit": "TF commit %s",
    "tf-source": "TF source %s",
    "tf-test": "TF test %s",
    "fwr13y-doc": "NVIDIA framework-reproducibility %s",
    "fwr13y-issue": "NVIDIA framework-reproducibility issue %s",
    "fwr13y-pr": "NVIDIA framework-reproducibility PR %s",
    "horovod-pr": "Horovod PR %s",
    "paper": "%s",
    "doc": "%s",
    "measured": "measured by tfdet probe: %s",
    "checked": "checked here (commands and findings): %s",
}


def describe_source(citation):
    """(label, url or None) for a citation such as 'tf-pr:51392'."""
    kind, _, ref = citation.partition(":")
    label = _LABELS.get(kind, "%s") % ref
    link = _LINKS.get(kind)
    return label, (link(ref) if link else None)
