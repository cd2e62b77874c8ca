# bullet3 examples/pybullet/examples/video_sync_mp4.py (pybullet 3.2.7 wheel: pybullet_examples/),
# zlib licence (LICENSE.bullet3). Altered for sim_node, headless: import; the GUI's --mp4 option
# -> DIRECT with startStateLogging(STATE_LOGGING_VIDEO_MP4, "test.mp4") (a DIRECT PyBullet
# records nothing: its log id is printed); STEPS steps (env PYBULLET_EXAMPLE_STEPS, the original's
# 3 s = 720); the velocity print uncommented, every 60th step.
import os
import sim_node.pybullet as p
import time
import pybullet_data

#Once the video is recorded, you can extract all individual frames using ffmpeg
#mkdir frames
#ffmpeg -i test.mp4 "frames/out-%03d.png"

STEPS = int(os.environ.get("PYBULLET_EXAMPLE_STEPS", "240"))
#by default, PyBullet runs at 240Hz
p.connect(p.DIRECT)
p.configureDebugVisualizer(p.COV_ENABLE_GUI,0)
p.configureDebugVisualizer(p.COV_ENABLE_SINGLE_STEP_RENDERING,1)

p.setAdditionalSearchPath(pybullet_data.getDataPath())
p.loadURDF("plane.urdf")

#in 3 seconds, the object travels about 0.5*g*t^2 meter ~ 45 meter.
r2d2 = p.loadURDF("r2d2.urdf",[0,0,45])
#disable linear damping
p.changeDynamics(r2d2,-1, linearDamping=0)
p.setGravity(0,0,-10)
logId = p.startStateLogging(p.STATE_LOGGING_VIDEO_MP4, "test.mp4")
print("video log id", logId)

for i in range (STEPS):
  txt = "frame "+str(i)
  item = p.addUserDebugText(txt, [0,1,0])
  p.stepSimulation()
  #synchronize the visualizer (rendering frames for the video mp4) with stepSimulation
  p.configureDebugVisualizer(p.COV_ENABLE_SINGLE_STEP_RENDERING,1)
  if i % 60 == 59:
    print("r2d2 vel=", p.getBaseVelocity(r2d2)[0][2])
  p.removeUserDebugItem(item)

if logId >= 0:
  p.stopStateLogging(logId)
p.disconnect()
