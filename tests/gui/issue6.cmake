# Issue 6 (timeline, collective flows, playback, explain, compare, export): GUI tests, included
# from tests/gui/CMakeLists.txt (shardscope_add_qtest is defined there). The tests build their
# recordings with the real protocol encoder (timeline_test_recording.h).
foreach(test timeline_view_test timeline_export_test timeline_story_test flow_state_test playback_nav_test explain_text_test
             compare_view_test)
  shardscope_add_qtest(${test})
endforeach()
