// The lesson file reader (backend/lessons): what a valid lesson reads as, and that every kind of
// bad input is one error naming the key, never a crash or a silently dropped action.
#include "lessons/lesson.h"

#include <gtest/gtest.h>
#include <string>

namespace shardscope::lessons {
namespace {

std::string lessonWith(const std::string& step, const std::string& extra = "") {
    return R"({"schema":"shardscope.lesson/1","id":"demo","order":3,"title":{"en":"Demo","zh_CN":"演示"},)" +
           extra + R"("steps":[)" + step + "]}";
}

const std::string kStep =
    R"({"title":{"en":"T"},"text":{"en":"Ψ = {psi}, peak {ref.peak} {at_peak.activation}"},"recording":"zero3_tiny_4r.sstrace",)"
    R"("reference":"ddp_tiny_4r.sstrace","page":"timeline","highlight":"timelineView",)"
    R"("seek":{"at":"event","step":2,"kind":"collective_begin","collective":"all_gather","unit":"block0","nth":2,"rank":1}})";

TEST(lessonFile, ReadsEveryField) {
    const ParsedLesson p = parseLesson(lessonWith(kStep));
    ASSERT_TRUE(p) << p.error;
    const Lesson& l = *p.lesson;
    EXPECT_EQ(l.id, "demo");
    EXPECT_EQ(l.order, 3);
    EXPECT_EQ(l.title.in("zh_CN"), "演示");
    ASSERT_EQ(l.steps.size(), 1u);
    const Step& s = l.steps[0];
    EXPECT_EQ(s.recording, "zero3_tiny_4r.sstrace");
    EXPECT_EQ(s.reference, "ddp_tiny_4r.sstrace");
    EXPECT_EQ(s.page, "timeline");
    EXPECT_EQ(s.highlight, "timelineView");
    ASSERT_TRUE(s.seek);
    EXPECT_EQ(s.seek->at, Seek::At::Event);
    EXPECT_EQ(s.seek->step, 2);
    EXPECT_EQ(s.seek->kind, EventKind::CollectiveBegin);
    EXPECT_EQ(s.seek->collective, CollectiveOp::AllGather);
    EXPECT_EQ(s.seek->unit, "block0");
    EXPECT_EQ(s.seek->nth, 2);
    EXPECT_EQ(s.seek->rank, 1);
    // A language the step does not carry falls back to English.
    EXPECT_EQ(s.title.in("zh_CN"), "T");
}

TEST(lessonFile, ReadsRunSettings) {
    const ParsedLesson p = parseLesson(lessonWith(
        R"({"title":{"en":"T"},"text":{"en":"x"},"configure":{"model":"small","ranks":8,"strategy":"zero2","steps":3,"checkpointing":true,"prefetch":0},"run":true})"));
    ASSERT_TRUE(p) << p.error;
    const Step& s = p.lesson->steps[0];
    ASSERT_TRUE(s.configure);
    EXPECT_EQ(s.configure->model, "small");
    EXPECT_EQ(s.configure->ranks, 8);
    EXPECT_EQ(s.configure->strategy, plan::Strategy::Zero2);
    EXPECT_EQ(s.configure->steps, 3);
    EXPECT_TRUE(s.configure->checkpointing);
    EXPECT_EQ(s.configure->prefetch, 0);
    EXPECT_TRUE(s.run);
}

struct BadCase {
    std::string name;
    std::string text;
    std::string says; // a fragment of the one-line error
};

TEST(lessonFile, RefusesBadInputWithOneLine) {
    const std::string ok = R"({"title":{"en":"T"},"text":{"en":"x"}})";
    const BadCase cases[] = {
        {"not json", "{", "not valid JSON"},
        {"schema",
         R"({"schema":"shardscope.lesson/9","id":"a","order":1,"title":{"en":"A"},"steps":[)" + ok +
             "]}",
         "schema"},
        {"unknown key", lessonWith(R"({"title":{"en":"T"},"text":{"en":"x"},"hightlight":"a"})"),
         "unknown key \"hightlight\""},
        {"no steps", lessonWith(""), "steps"},
        {"key with newline", lessonWith(R"({"title":{"en":"T"},"text":{"en":"x"},"a\nb":1})"),
         "unknown key \"a?b\""},
        {"id with slash",
         R"({"schema":"shardscope.lesson/1","id":"../x","order":1,"title":{"en":"A"},"steps":[)" +
             ok + "]}",
         "id"},
        {"recording path",
         lessonWith(R"({"title":{"en":"T"},"text":{"en":"x"},"recording":"../etc/passwd"})"),
         "recording"},
        {"recording suffix",
         lessonWith(R"({"title":{"en":"T"},"text":{"en":"x"},"recording":"x.json"})"), ".sstrace"},
        {"ranks", lessonWith(R"({"title":{"en":"T"},"text":{"en":"x"},"configure":{"ranks":0}})"),
         "ranks"},
        {"huge ranks",
         lessonWith(
             R"({"title":{"en":"T"},"text":{"en":"x"},"configure":{"ranks":18446744073709551615}})"),
         "ranks"},
        {"strategy",
         lessonWith(R"({"title":{"en":"T"},"text":{"en":"x"},"configure":{"strategy":"zero4"}})"),
         "zero4"},
        {"run without settings", lessonWith(R"({"title":{"en":"T"},"text":{"en":"x"},"run":true})"),
         "configure"},
        {"seek without run",
         lessonWith(R"({"title":{"en":"T"},"text":{"en":"x"},"seek":{"at":"peak"}})"), "seek"},
        {"filter without event",
         lessonWith(
             R"({"title":{"en":"T"},"text":{"en":"x"},"recording":"a.sstrace","seek":{"unit":"block0"}})"),
         "event"},
        {"seek step 0",
         lessonWith(
             R"({"title":{"en":"T"},"text":{"en":"x"},"recording":"a.sstrace","seek":{"step":0}})"),
         "step"},
        {"kind",
         lessonWith(
             R"({"title":{"en":"T"},"text":{"en":"x"},"recording":"a.sstrace","seek":{"at":"event","kind":"explode"}})"),
         "explode"},
        {"text not string", lessonWith(R"({"title":{"en":"T"},"text":{"en":5}})"), "text.en"},
        {"empty english", lessonWith(R"({"title":{"en":""},"text":{"en":"x"}})"), "title.en"},
        {"long text",
         lessonWith(std::string(R"({"title":{"en":"T"},"text":{"en":")")
                        .append(kMaxTextBytes + 1, 'a')
                        .append(R"("}})")),
         "longer"},
    };
    for (const BadCase& c : cases) {
        const ParsedLesson p = parseLesson(c.text);
        EXPECT_FALSE(p) << c.name;
        EXPECT_NE(p.error.find(c.says), std::string::npos) << c.name << ": " << p.error;
        EXPECT_EQ(p.error.find('\n'), std::string::npos) << c.name;
    }
}

TEST(lessonFile, BoundsStepsAndSize) {
    std::string steps;
    for (std::size_t i = 0; i <= kMaxSteps; ++i)
        steps += (i ? "," : "") + std::string(R"({"title":{"en":"T"},"text":{"en":"x"}})");
    EXPECT_FALSE(parseLesson(lessonWith(steps)));
    EXPECT_FALSE(parseLesson(std::string(kMaxLessonBytes + 1, ' ')));
}

TEST(lessonFile, FindsPlaceholders) {
    EXPECT_EQ(placeholders("a {psi} b {ref.peak} {at_peak.activation} {} {Bad} {x"),
              (std::vector<std::string>{"psi", "ref.peak", "at_peak.activation"}));
}

} // namespace
} // namespace shardscope::lessons
