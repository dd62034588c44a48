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

// A step is about one thing: its paragraph, its seek and its outline (lessons/elements.h). Each
// case is a step a lesson once shipped (or the kind of slip that makes one), refused by name.
TEST(lessonFile, RefusesAStepWhoseScreenAndTextDisagree) {
    const auto step = [](const std::string& body) {
        return lessonWith(R"({"title":{"en":"T"},"recording":"zero3_tiny_4r.sstrace",)" + body +
                          "}");
    };
    const BadCase cases[] = {
        {"free of which buffer",
         step(R"("text":{"en":"{ev.unit} freed"},"page":"timeline","highlight":"timelineView",)"
              R"("seek":{"at":"event","step":2,"kind":"free","unit":"block0"})"),
         "\"category\""},
        {"flows at a compute",
         step(
             R"("text":{"en":"{ev.unit} computes"},"page":"flows","highlight":"flowView",)"
             R"("seek":{"at":"event","step":2,"kind":"compute_begin","phase":"forward","unit":"block0"})"),
         "last collective"},
        {"peak beside the model states",
         step(R"("text":{"en":"peak {peak}"},"page":"ranks","highlight":"measuredVsTheoryPlot",)"
              R"("seek":{"at":"peak","step":2})"),
         "{peak} quotes the peak, which \"measuredVsTheoryPlot\" does not show"},
        {"saving beside the run button",
         step(R"("text":{"en":"measured {saving}"},"page":"ranks","highlight":"runButton")"),
         "\"runButton\" does not show"},
        {"a whole page outlined",
         step(R"("text":{"en":"x"},"page":"calculator","highlight":"calculatorPage")"),
         "not an element"},
        {"an element of another page",
         step(R"("text":{"en":"x"},"page":"timeline","highlight":"rankLedgerView")"),
         "on the ranks page"},
        {"the moment without a seek",
         step(R"("text":{"en":"{live.total} live"},"page":"ranks","highlight":"rankLedgerView")"),
         "needs a \"seek\""},
        {"the moment with nothing outlined",
         step(R"("text":{"en":"{live.total} live"},"seek":{"at":"peak"})"),
         "no outlined element shows"},
        {"a size of its own",
         step(
             R"("text":{"en":"a budget of <b>1.6 MB</b>"},"page":"ranks","highlight":"rankLedgerView")"),
         "byte size of its own"},
        {"a size of its own in Chinese",
         step(
             R"("text":{"en":"a budget","zh_CN":"预算 2GiB"},"page":"ranks","highlight":"rankLedgerView")"),
         "text.zh_CN"},
        {"Chinese quotes other numbers",
         step(
             R"("text":{"en":"{psi} {n}","zh_CN":"{psi}"},"page":"ranks","highlight":"rankLedgerView")"),
         "other facts than the English"},
        {"event without unit",
         step(R"("text":{"en":"x"},"page":"timeline","highlight":"timelineView",)"
              R"("seek":{"at":"event","step":2,"kind":"compute_begin","phase":"forward"})"),
         "\"unit\""},
        {"event without step",
         step(R"("text":{"en":"x"},"seek":{"at":"event","kind":"step_begin"})"), "\"step\""},
        {"transfer without which",
         step(
             R"("text":{"en":"x"},"seek":{"at":"event","step":1,"kind":"transfer_begin","unit":"block0"})"),
         "\"transfer\""},
        {"unknown category",
         step(
             R"("text":{"en":"x"},"seek":{"at":"event","step":1,"kind":"free","category":"ram","unit":"b"})"),
         "ram"},
        {"empty comparison", step(R"("text":{"en":"x"},"compare":[])"), "compare"},
        {"comparison of a path", step(R"("text":{"en":"x"},"compare":["../a.sstrace"])"),
         "compare[0]"},
    };
    for (const BadCase& c : cases) {
        const ParsedLesson p = parseLesson(c.text);
        EXPECT_FALSE(p) << c.name;
        EXPECT_NE(p.error.find(c.says), std::string::npos) << c.name << ": " << p.error;
        EXPECT_EQ(p.error.find('\n'), std::string::npos) << c.name;
    }
    // The same steps, made coherent, read.
    for (
        const std::string& good : {
            step(
                R"("text":{"en":"{ev.unit} freed, {gathered}"},"page":"timeline","highlight":"timelineView",)"
                R"("seek":{"at":"event","step":2,"kind":"free","category":"param_full","unit":"block0"})"),
            step(R"("text":{"en":"peak {peak}, {live.total} live of {capacity}"},"page":"ranks",)"
                 R"("highlight":"rankLedgerView","seek":{"at":"peak","step":2})"),
            step(
                R"("text":{"en":"{ref.peak} and {n} ranks, 16 B/param"},"compare":["a.sstrace","b.sstrace"],)"
                R"("page":"compare","highlight":"comparePeakPlot")"),
        }) {
        const ParsedLesson p = parseLesson(good);
        EXPECT_TRUE(p) << p.error;
    }
    const ParsedLesson p = parseLesson(step(
        R"("text":{"en":"x"},"seek":{"at":"event","step":1,"kind":"transfer_wait","transfer":"nvme_read","unit":"block0"})"));
    ASSERT_TRUE(p) << p.error;
    EXPECT_EQ(p.lesson->steps[0].seek->transfer, Transfer::NvmeRead);
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
