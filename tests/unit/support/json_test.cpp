// SPDX-License-Identifier: Apache-2.0
// Json: value semantics, round trips, exact int64 and double printing, escapes, and the strict
// parser's rejections with their line and column.
#include "tensortune/support/json.h"

#include "tensortune/support/error.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>

namespace tensortune::support {
namespace {

std::string parse_error(const std::string& text) {
  try {
    Json::parse(text);
  } catch (const UserError& e) {
    return e.what();
  }
  return "<no error>";
}

TEST(Json, CopyIsIndependentOfTheOriginal) {
  Json original = Json::object();
  original["steps"] = Json::array();
  original["steps"].push_back(1);
  Json copy = original;
  copy["steps"].push_back(2);
  copy["name"] = "changed";
  EXPECT_EQ(original.dump(), R"({"steps":[1]})");
  EXPECT_EQ(copy.dump(), R"({"name":"changed","steps":[1,2]})");
  Json assigned;
  assigned = original;
  EXPECT_EQ(assigned, original);
  assigned["steps"].as_array_mut().clear();
  EXPECT_EQ(original.at("steps").size(), 1U);
}

TEST(Json, ReferenceTakenBeforeACopyDoesNotReachTheCopy) {
  Json a = Json::object();
  Json& steps = a["steps"];
  steps.push_back(1);
  Json b = a;
  steps.push_back(2);
  EXPECT_EQ(a.at("steps").size(), 2U);
  EXPECT_EQ(b.at("steps").size(), 1U);
}

TEST(Json, MovedFromValueIsNull) {
  Json a = Json::Array{1, 2, 3};
  Json b = std::move(a);
  EXPECT_TRUE(a.is_null());  // NOLINT(bugprone-use-after-move): documented behaviour
  EXPECT_EQ(b.size(), 3U);
}

TEST(Json, DumpSortsKeysAndIsCompact) {
  Json j = Json::object();
  j["zeta"] = true;
  j["alpha"] = nullptr;
  j["mid"] = Json::Array{1, "two", 3.5};
  EXPECT_EQ(j.dump(), R"({"alpha":null,"mid":[1,"two",3.5],"zeta":true})");
}

TEST(Json, DumpIndents) {
  Json j = Json::object();
  j["a"] = Json::Array{1, 2};
  j["b"] = Json::object();
  j["c"] = Json::array();
  EXPECT_EQ(j.dump(2), "{\n  \"a\": [\n    1,\n    2\n  ],\n  \"b\": {},\n  \"c\": []\n}");
  EXPECT_EQ(Json::parse(j.dump(2)), j);
}

TEST(Json, RoundTripsNestedDocuments) {
  const std::string text =
      R"({"a":[true,false,null,-0.5,1e-300,12345678901234],"b":{"c":"d\n\"e\""},"e":[]})";
  Json j = Json::parse(text);
  EXPECT_EQ(j.dump(), text);
  EXPECT_EQ(Json::parse(j.dump()), j);
}

TEST(Json, KeepsInt64ExtremesExact) {
  constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  Json j = Json::parse("[-9223372036854775808, 9223372036854775807]");
  EXPECT_EQ(j.as_array()[0].as_int(), kMin);
  EXPECT_EQ(j.as_array()[1].as_int(), kMax);
  EXPECT_EQ(Json(kMin).dump(), "-9223372036854775808");
  EXPECT_EQ(Json(static_cast<uint64_t>(kMax)).as_int(), kMax);
  EXPECT_THROW(Json(static_cast<uint64_t>(kMax) + 1), UserError);
}

TEST(Json, IntegersBeyondInt64BecomeDoubles) {
  Json big = Json::parse("9223372036854775808");
  EXPECT_EQ(big.kind(), Json::Kind::Double);
  EXPECT_EQ(big.as_double(), 9223372036854775808.0);
  EXPECT_EQ(Json::parse("-0").kind(), Json::Kind::Int);
  EXPECT_EQ(Json::parse("1.0").kind(), Json::Kind::Double);
  EXPECT_EQ(Json::parse("1e2").kind(), Json::Kind::Double);
}

TEST(Json, DoublesPrintShortestRoundTripForm) {
  EXPECT_EQ(Json(0.1).dump(), "0.1");
  EXPECT_EQ(Json(1.0).dump(), "1.0");
  EXPECT_EQ(Json(-0.0).dump(), "-0.0");
  EXPECT_EQ(Json(1e100).dump(), "1e+100");
  for (double d : {0.1 + 0.2, 1.0 / 3.0, 5e-324, std::numeric_limits<double>::max(), 123456.789}) {
    Json back = Json::parse(Json(d).dump());
    EXPECT_EQ(back.kind(), Json::Kind::Double);
    EXPECT_EQ(back.as_double(), d) << Json(d).dump();
  }
  EXPECT_EQ(Json::parse("1e-400").as_double(), 0.0);  // underflow is representable as 0
}

TEST(Json, RefusesToWriteNanOrInfinity) {
  EXPECT_THROW(Json(std::nan("")).dump(), UserError);
  EXPECT_THROW(Json(Json::Array{std::numeric_limits<double>::infinity()}).dump(), UserError);
}

TEST(Json, DecodesAndEncodesStringEscapes) {
  Json j = Json::parse(R"("a\"b\\c\/d\b\f\n\r\t\u0041\u00e9\u20ac\ud83d\ude00")");
  EXPECT_EQ(j.as_string(), "a\"b\\c/d\b\f\n\r\tA\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80");
  EXPECT_EQ(j.dump(), "\"a\\\"b\\\\c/d\\b\\f\\n\\r\\tA\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\"");
  EXPECT_EQ(Json(std::string("\x01\x1f", 2)).dump(), R"("\u0001\u001f")");
  EXPECT_EQ(Json::parse(R"("\u0000")").as_string(), std::string(1, '\0'));
  EXPECT_EQ(Json::parse(Json(j).dump()), j);
}

TEST(Json, ReportsLineAndColumnOfMalformedInput) {
  EXPECT_EQ(parse_error("{\n  \"a\": 1,\n  \"b\" 2\n}"),
            "json: line 3, column 7: expected ':' after object key, found '2'");
  EXPECT_EQ(parse_error("[1, 2,]"), "json: line 1, column 7: expected a value, found ']'");
  EXPECT_EQ(parse_error(""), "json: line 1, column 1: expected a value, found end of input");
  EXPECT_EQ(parse_error("[1 2]"),
            "json: line 1, column 4: expected ',' or ']' after array element, found '2'");
  EXPECT_EQ(parse_error("{} x"), "json: line 1, column 4: unexpected 'x' after the value");
  EXPECT_EQ(parse_error("{\"k\":1,\"k\":2}"), "json: line 1, column 8: duplicate key 'k'");
}

TEST(Json, RejectsNonStandardSyntax) {
  for (const char* bad :
       {"01",       "-",      "1.",      ".5",    "1e",    "+1",         "NaN",
        "Infinity", "tru",    "nul",     "'a'",   "[1,]",  "{\"a\":1,}", "// c\n1",
        "\"a",      "\"\t\"", "\"\\x\"", "{1:2}", "1e999", "[",          "{\"a\"}"}) {
    EXPECT_THROW(Json::parse(bad), UserError) << bad;
  }
}

TEST(Json, RejectsBrokenUnicode) {
  EXPECT_NE(parse_error(R"("\ud83d")").find("high surrogate"), std::string::npos);
  EXPECT_NE(parse_error(R"("\ude00")").find("lone low surrogate"), std::string::npos);
  EXPECT_NE(parse_error(R"("\ud83d\u0041")").find("low surrogate"), std::string::npos);
  EXPECT_NE(parse_error(R"("\u12G4")").find("4 hex digits"), std::string::npos);
  EXPECT_NE(parse_error("\"\xc3\"").find("invalid UTF-8"), std::string::npos);
  EXPECT_NE(parse_error("\"\xc0\xaf\"").find("invalid UTF-8"), std::string::npos);      // overlong
  EXPECT_NE(parse_error("\"\xed\xa0\x80\"").find("invalid UTF-8"), std::string::npos);  // surrogate
  EXPECT_NE(parse_error("\"\xf4\x90\x80\x80\"").find("invalid UTF-8"), std::string::npos);
}

TEST(Json, RefusesExcessiveNesting) {
  std::string deep(600, '[');
  deep += std::string(600, ']');
  EXPECT_NE(parse_error(deep).find("nesting deeper than"), std::string::npos);
  std::string ok(100, '[');
  ok += std::string(100, ']');
  EXPECT_NO_THROW(Json::parse(ok));
}

TEST(Json, TypedAccessorsNameTheValueAndTheKindFound) {
  Json j = Json::parse(R"({"factor":"4","n":3})");
  try {
    j.at("factor").as_int("step 3 field 'factor'");
    FAIL() << "no exception";
  } catch (const UserError& e) {
    EXPECT_STREQ(e.what(), "step 3 field 'factor': expected int, found string");
  }
  EXPECT_EQ(j.at("n").as_double(), 3.0);
  EXPECT_THROW(j.at("n").as_string(), UserError);
  EXPECT_THROW(Json(1.5).as_int(), UserError);
  EXPECT_THROW(Json(1).size(), UserError);
}

TEST(Json, AtNamesTheMissingKeyAndTheKeysPresent) {
  Json j = Json::parse(R"({"b":1,"a":2})");
  try {
    j.at("c");
    FAIL() << "no exception";
  } catch (const UserError& e) {
    EXPECT_STREQ(e.what(), "json: missing key 'c' (keys: a, b)");
  }
  EXPECT_TRUE(j.contains("a"));
  EXPECT_FALSE(j.contains("c"));
  EXPECT_FALSE(Json(3).contains("a"));
}

TEST(Json, EqualityComparesKindsAndContents) {
  EXPECT_EQ(Json::parse("[1,{\"a\":null}]"), Json(Json::Array{1, Json::Object{{"a", nullptr}}}));
  EXPECT_NE(Json(1), Json(1.0));
  EXPECT_NE(Json("1"), Json(1));
  EXPECT_NE(Json::parse("[1,2]"), Json::parse("[2,1]"));
  EXPECT_NE(Json::parse(R"({"a":1})"), Json::parse(R"({"a":1,"b":2})"));
}

TEST(Json, NullBecomesContainerOnMutation) {
  Json arr;
  arr.push_back("x");
  EXPECT_EQ(arr.dump(), R"(["x"])");
  Json obj;
  obj["k"] = 5;
  EXPECT_EQ(obj.dump(), R"({"k":5})");
  Json number(3);
  EXPECT_THROW(number["k"], UserError);
  EXPECT_THROW(number.push_back(1), UserError);
}

}  // namespace
}  // namespace tensortune::support
