#include "core/csv.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "core/kept_files.hpp"
#include "core/params.hpp"
#include "core/schema.hpp"

namespace mmlab {
namespace {

namespace fs = std::filesystem;

struct TempDir {
  fs::path path;
  TempDir() {
    path = fs::temp_directory_path() / ("mmlab-csv-" + std::to_string(::getpid()) + "-" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(path);
    fs::create_directories(path);
  }
  ~TempDir() { fs::remove_all(path); }
  std::string file(const std::string& name) const { return (path / name).string(); }
};

std::string slurp(const std::string& p) {
  std::ifstream in(p);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

const CsvRow kHeader = {"a", "b", "c"};

TEST(Csv, EscapeAndParseRoundTrip) {
  const CsvRow row = {"plain", "with,comma", "with \"quotes\"", "", "x;y=1"};
  const std::string line = csv_line(row);
  EXPECT_EQ(line, "plain,\"with,comma\",\"with \"\"quotes\"\"\",,x;y=1\n");
  EXPECT_EQ(parse_csv_line(line.substr(0, line.size() - 1), "t"), row);
  EXPECT_THROW(parse_csv_line("\"open", "t"), UsageError);
}

// The one parser's trimming (the results reader's): blanks outside quotes go, those inside stay.
TEST(Csv, TrimDropsBlanksOutsideQuotesOnly) {
  EXPECT_EQ(parse_csv_line(" a ,\t\"b, \" ,c", "t", true), (CsvRow{"a", "b, ", "c"}));
  EXPECT_EQ(parse_csv_line(" a ,b", "t"), (CsvRow{" a ", "b"}));
  EXPECT_EQ(parse_csv_line(",  ,", "t", true), (CsvRow{"", "", ""}));
}

// Columns by name: any order in the file, "" for one the file lacks; what is malformed names its line.
TEST(Csv, ColumnsByNameAndTheirRefusals) {
  TempDir d;
  std::ofstream(d.file("r.csv")) << "c,a,x\n3,1,9\n 6 ,\"4,5\",9\n";
  CsvColumns in(d.file("r.csv"), {"a", "b", "c"});
  EXPECT_TRUE(in.has("x"));
  EXPECT_FALSE(in.has("b"));
  CsvRow row;
  ASSERT_TRUE(in.next(row));
  EXPECT_EQ(row, (CsvRow{"1", "", "3"}));
  EXPECT_EQ(in.line(), 2u);
  ASSERT_TRUE(in.next(row));
  EXPECT_EQ(row, (CsvRow{"4,5", "", "6"}));
  EXPECT_FALSE(in.next(row));
  const auto refused = [&](const std::string& text, const std::string& says) {
    std::ofstream(d.file("bad.csv")) << text;
    try {
      CsvColumns bad(d.file("bad.csv"), {"a"});
      for (CsvRow r; bad.next(r);) {
      }
      ADD_FAILURE() << text << " was read";
    } catch (const UsageError& e) {
      EXPECT_NE(std::string(e.what()).find(says), std::string::npos) << e.what();
    }
  };
  refused("a,b\n1,2\n1\n", "bad.csv:3: 1 fields, the header has 2");
  refused("a,b\n1,2,3\n", "bad.csv:2: 3 fields");
  refused("a,b\n\n1,2\n", "bad.csv:2: an empty line");
  refused("a,a\n1,2\n", "names column 'a' twice");
  refused("a,b\n\"1,2\n", "unterminated quoted field");
  refused("", "empty, no header");
}

// A file kept in memory (core/kept_files.hpp: a run's rows handed to the analysis without a file) reads
// as the file it stands for, by name, until it is dropped; no file of that name is made.
TEST(Csv, AKeptFileReadsAsTheFileItStandsFor) {
  const std::string name = kept_files::new_name();
  EXPECT_NE(name, kept_files::new_name());
  kept_files::put(name, "a,b\n1,2\n3,4\n");
  CsvColumns in(name, {"b"});
  CsvRow row;
  ASSERT_TRUE(in.next(row));
  EXPECT_EQ(row, CsvRow{"2"});
  ASSERT_TRUE(in.next(row));
  EXPECT_EQ(row, CsvRow{"4"});
  EXPECT_FALSE(in.next(row));
  EXPECT_FALSE(std::filesystem::exists(name));
  kept_files::drop(name);
  EXPECT_EQ(kept_files::find(name), nullptr);
  EXPECT_THROW(CsvColumns(name, {"b"}), UsageError);
}

TEST(Csv, WriteThenReadBack) {
  TempDir d;
  {
    CsvWriter w(d.file("r.csv"), kHeader, OpenMode::append);
    w.write({"1", "x,y", "3"});
    w.write_lines({{"4", "5", "6"}, {"7", "8", "9"}});
  }
  const CsvTable t = read_csv(d.file("r.csv"));
  EXPECT_EQ(t.header, kHeader);
  ASSERT_EQ(t.rows.size(), 3u);
  EXPECT_EQ(t.rows[0][1], "x,y");
  EXPECT_EQ(t.column("c"), 2);
  EXPECT_EQ(t.column("zzz"), -1);
}

TEST(Csv, AppendKeepsRowsAndWritesTheHeaderOnce) {
  TempDir d;
  { CsvWriter(d.file("r.csv"), kHeader, OpenMode::append).write({"1", "2", "3"}); }
  { CsvWriter(d.file("r.csv"), kHeader, OpenMode::append).write({"4", "5", "6"}); }
  EXPECT_EQ(slurp(d.file("r.csv")), "a,b,c\n1,2,3\n4,5,6\n");
  { CsvWriter(d.file("r.csv"), kHeader, OpenMode::overwrite).write({"7", "8", "9"}); }
  EXPECT_EQ(slurp(d.file("r.csv")), "a,b,c\n7,8,9\n");
}

// --overwrite empties only the lab's own files, and the advice for a file it will not append to is a
// new file, never --overwrite (issue #80: a foreign file was clobbered on the lab's own suggestion).
TEST(Csv, OverwriteRefusesWhatIsNotOursAndNoMessageSuggestsIt) {
  TempDir d;
  auto refused = [&](const std::string& file, OpenMode mode) {
    try {
      CsvWriter w(d.file(file), kHeader, mode);
    } catch (const UsageError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  { std::ofstream(d.file("notes.txt")) << "one column of text\nmore\n"; }
  { std::ofstream(d.file("foreign.csv")) << "x,y,z\n1,2,3\n"; }
  { std::ofstream(d.file("older.csv")) << "a,b\n1,2\n"; }  // ours, another version: first name a
  const std::string text = refused("notes.txt", OpenMode::overwrite), foreign = refused("foreign.csv", OpenMode::append),
                    older = refused("older.csv", OpenMode::append);
  EXPECT_NE(text.find("--overwrite empties only mmlab's own files"), std::string::npos) << text;
  EXPECT_EQ(slurp(d.file("notes.txt")), "one column of text\nmore\n");
  EXPECT_NE(foreign.find("not a CSV file of mmlab's"), std::string::npos) << foreign;
  EXPECT_NE(older.find("another schema version"), std::string::npos) << older;
  for (const std::string& m : {foreign, older}) EXPECT_EQ(m.find("pass --overwrite"), std::string::npos) << m;
  EXPECT_EQ(refused("older.csv", OpenMode::overwrite), "");  // its own older file: replaced when asked
  EXPECT_EQ(slurp(d.file("older.csv")), "");
}

TEST(Csv, OpeningWritesNothingUntilARow) {
  TempDir d;
  { CsvWriter w(d.file("r.csv"), kHeader, OpenMode::append); }
  EXPECT_EQ(slurp(d.file("r.csv")), "");
}

TEST(Csv, ADifferentHeaderIsRefusedAndTheFileKept) {
  TempDir d;
  { std::ofstream(d.file("r.csv")) << "x,y\n1,2\n"; }
  EXPECT_THROW(CsvWriter(d.file("r.csv"), kHeader, OpenMode::append), UsageError);
  EXPECT_EQ(slurp(d.file("r.csv")), "x,y\n1,2\n");
}

TEST(Csv, ATornLastLineIsCutOnReopening) {
  TempDir d;
  { std::ofstream(d.file("r.csv")) << "a,b,c\n1,2,3\n4,5"; }  // killed mid-write
  { CsvWriter(d.file("r.csv"), kHeader, OpenMode::append).write({"7", "8", "9"}); }
  EXPECT_EQ(slurp(d.file("r.csv")), "a,b,c\n1,2,3\n7,8,9\n");
}

// Repair only what mmlab tore, only once the file is known to be ours (its first line our header).
TEST(Csv, ForeignFilesAreNeverRepaired) {
  TempDir d;
  for (const std::string& text :
       {std::string("x,y,z\n1,2,3\n4,5,6"), std::string("x,y,z"), std::string("1,2")}) {
    { std::ofstream(d.file("f.csv")) << text; }
    EXPECT_THROW(CsvWriter(d.file("f.csv"), kHeader, OpenMode::append), UsageError) << text;
    EXPECT_EQ(slurp(d.file("f.csv")), text);
  }
}

TEST(Csv, OurTornHeaderIsRewrittenAndATornRowCut) {
  TempDir d;
  for (const std::string& torn : {std::string("a,b"), std::string("a,b,c")}) {  // cut before its newline
    { std::ofstream(d.file("h.csv")) << torn; }
    { CsvWriter(d.file("h.csv"), kHeader, OpenMode::append).write({"1", "2", "3"}); }
    EXPECT_EQ(slurp(d.file("h.csv")), "a,b,c\n1,2,3\n") << torn;
  }
  { std::ofstream(d.file("r.csv")) << "a,b,c\n1,2,3\n4,\"5,"; }  // cut inside a quoted field
  { CsvWriter(d.file("r.csv"), kHeader, OpenMode::append).write({"7", "8", "9"}); }
  EXPECT_EQ(slurp(d.file("r.csv")), "a,b,c\n1,2,3\n7,8,9\n");
  // A last line with more fields than a row of ours is not ours to cut.
  { std::ofstream(d.file("w.csv")) << "a,b,c\n1,2,3\n4,5,6,7"; }
  EXPECT_THROW(CsvWriter(d.file("w.csv"), kHeader, OpenMode::append), UsageError);
  EXPECT_EQ(slurp(d.file("w.csv")), "a,b,c\n1,2,3\n4,5,6,7");
}

TEST(Csv, ASecondWriterIsRefusedAndTruncatesNothing) {
  TempDir d;
  CsvWriter first(d.file("r.csv"), kHeader, OpenMode::append);
  first.write({"1", "2", "3"});
  for (OpenMode mode : {OpenMode::append, OpenMode::overwrite}) {
    try {
      CsvWriter second(d.file("r.csv"), kHeader, mode);
      FAIL() << "a second writer was let in";
    } catch (const UsageError& e) {
      EXPECT_NE(std::string(e.what()).find("another mmlab run"), std::string::npos) << e.what();
    }
  }
  first.write({"4", "5", "6"});
  EXPECT_EQ(slurp(d.file("r.csv")), "a,b,c\n1,2,3\n4,5,6\n");
}

TEST(Csv, DevicesAreNotFiles) {
  for (const char* dev : {"/dev/null", "/dev/full", "/dev/zero"}) {
    EXPECT_THROW(CsvWriter(dev, kHeader, OpenMode::append), UsageError) << dev;
    EXPECT_THROW(read_csv(dev), UsageError) << dev;
  }
}

TEST(Csv, ReadingIsBoundedAndSkipsAByteOrderMark) {
  TempDir d;
  { std::ofstream(d.file("long.csv")) << "a,b,c\n" << std::string(kMaxCsvLine + 10, 'x') << "\n"; }
  EXPECT_THROW(read_csv(d.file("long.csv")), UsageError);
  {
    std::ofstream(d.file("bom.csv")) << "\xEF\xBB\xBF"
                                     << "a,b,c\n1,2,3\n";
  }
  EXPECT_EQ(read_csv(d.file("bom.csv")).header, kHeader);
  { CsvWriter(d.file("bom.csv"), kHeader, OpenMode::append).write({"4", "5", "6"}); }  // still ours
  EXPECT_EQ(read_csv(d.file("bom.csv")).rows.size(), 2u);
}

TEST(Csv, UnwritablePathsAreUsageErrors) {
  TempDir d;
  EXPECT_THROW(CsvWriter(d.path.string(), kHeader, OpenMode::append), UsageError);  // a folder
  { std::ofstream(d.file("plainfile")) << "x"; }
  EXPECT_THROW(CsvWriter(d.file("plainfile") + "/r.csv", kHeader, OpenMode::append), UsageError);
}

TEST(Csv, MalformedFilesNameTheLine) {
  TempDir d;
  { std::ofstream(d.file("bad.csv")) << "a,b,c\n1,2,3\n1,2\n"; }
  try {
    read_csv(d.file("bad.csv"));
    FAIL() << "no error";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("bad.csv:3"), std::string::npos) << e.what();
  }
}

TEST(Csv, RecordSetsByColumnName) {
  Record r(kHeader);
  r.set("b", 2.5).set("a", 7LL).set("c", "x");
  EXPECT_EQ(csv_row(r.values()), (CsvRow{"7", "2.5", "x"}));
  EXPECT_THROW(r.set("nope", "1"), std::logic_error);
  // A number keeps its value beside the text the file holds (a caller's sink takes the value).
  r.set("b", 1.0 / 3.0, 4).set("a", 18446744073709551615ULL);
  const Row& cells = r.values();
  EXPECT_EQ(cells[1].kind, Cell::Kind::number);
  EXPECT_EQ(cells[1].number, 1.0 / 3.0);
  EXPECT_EQ(cells[1].text, "0.3333");
  EXPECT_EQ(cells[0].text, "18446744073709551615");
  EXPECT_EQ(cells[2].kind, Cell::Kind::text);
  EXPECT_EQ(Row(3)[0].kind, Cell::Kind::empty);
}

// A choice column carries its values (core/columns.hpp), and they are the names the lab writes: the
// enums' names, each value read back to the enum it came from.
TEST(Csv, ChoiceColumnsCarryTheirValues) {
  std::size_t choices = 0;
  for (const Column& c : kResultColumns) {
    SCOPED_TRACE(c.name);
    EXPECT_EQ(c.type == ColumnType::choice, c.values.count > 0);
    choices += c.type == ColumnType::choice;
    const Domain d = column_domain(c.name);
    EXPECT_EQ(d.values.size(), c.values.count);
    for (std::size_t i = 0; i < c.values.count; ++i) EXPECT_TRUE(in_domain(c.name, c.values.names[i]));
  }
  EXPECT_EQ(choices, 8u);
  EXPECT_TRUE(in_domain(column_name(Col::trial_inputs), "own"));
  EXPECT_FALSE(in_domain(column_name(Col::trial_inputs), "fresh"));
  for (Scope s : {Scope::kernel, Scope::batched, Scope::end_to_end}) EXPECT_EQ(parse_scope(scope_name(s)), s);
  for (Timer t : kAllTimers) EXPECT_TRUE(in_domain(column_name(Col::timer), timer_name(t)));
  for (Status s : {Status::ok, Status::skipped, Status::failed}) EXPECT_EQ(parse_status(status_name(s)), s);
  EXPECT_EQ(std::string(status_name(Status::interrupted)), "interrupted");
  EXPECT_FALSE(in_domain(column_name(Col::status), "interrupted"));  // reported, never written
  for (const Inputs& x : kAllInputs) EXPECT_EQ(parse_inputs_name(inputs_name(x)), x);
  EXPECT_TRUE(column_domain(column_name(Col::inputs)).open);
  EXPECT_TRUE(in_domain(column_name(Col::inputs), "exp_spread:0.5"));
  EXPECT_EQ(std::string(precision_name(Precision::tf32)), "tf32");
  EXPECT_EQ(std::string(l2_flush_name(true)), "on");
  EXPECT_EQ(std::string(order_name(true)), "interleaved");
  EXPECT_TRUE(column_domain("median_ms").values.empty());
}

}  // namespace
}  // namespace mmlab
