# bullet3 examples/pybullet/examples/profileTiming.py (pybullet 3.2.7 wheel: pybullet_examples/),
# zlib licence (LICENSE.bullet3). Altered for sim_node, headless: import; GUI -> DIRECT; the
# 3.1 s wall-clock loop with sleeps -> STEPS passes (env PYBULLET_EXAMPLE_STEPS); prints the log
# id and whether the json file was written (PyBullet appends _0.json to its name).
import os
import sim_node.pybullet as p
import time
#you can visualize the timings using Google Chrome, visit about://tracing 
#and load the json file
import pybullet_data

STEPS = int(os.environ.get("PYBULLET_EXAMPLE_STEPS", "60"))
p.connect(p.DIRECT)
p.setAdditionalSearchPath(pybullet_data.getDataPath())


logId = p.startStateLogging(p.STATE_LOGGING_PROFILE_TIMINGS, "chrome_about_tracing.json")
for step in range(STEPS):
  p.stepSimulation()
  p.submitProfileTiming("pythontest")
  p.submitProfileTiming("nested")
  for i in range (100):
    p.submitProfileTiming("deep_nested")
    p.submitProfileTiming()
  p.submitProfileTiming()
  p.submitProfileTiming()

print("log id", logId)
p.stopStateLogging(logId)
import glob
print("json written", len(glob.glob("chrome_about_tracing.json*")) > 0)
