"""A source folder is what the user put there: a symbolic link planted in it (an unpacked archive's
link to a key or to another project's data) does not pull the file it points to into a release."""

from __future__ import annotations

from curate.curation.sources import expand


def test_links_out_of_the_source_folder_are_named_and_not_read_links_within_it_are(tmp_path):
    outside, folder = tmp_path / "outside", tmp_path / "in"
    (folder / "sub").mkdir(parents=True)
    outside.mkdir()
    (outside / "host.csv").write_text("secret,value\nhost,42\n")
    (folder / "good.csv").write_text("a,b\n1,2\n")
    (folder / "planted.csv").symlink_to(outside / "host.csv")
    (folder / "sub" / "relative.csv").symlink_to("../../outside/host.csv")
    (folder / "sub" / "folder").symlink_to(outside, target_is_directory=True)  # not entered, but named
    (folder / "sub" / "inner.csv").symlink_to(folder / "good.csv")

    units, skipped = expand(str(folder))

    assert sorted(u.path for u in units) == [str(folder / "good.csv"), str(folder / "sub" / "inner.csv")]
    reasons = {s["path"]: s["reason"] for s in skipped}
    assert reasons.pop(str(folder / "sub" / "folder")).startswith("a symbolic link to a folder, not followed")
    assert reasons == {
        str(p): "a symbolic link that leads out of the source folder (copy the file in to read it)"
        for p in (folder / "planted.csv", folder / "sub" / "relative.csv")}
