#make sure to compile pybullet with PYBULLET_USE_NUMPY enabled
#otherwise use testrender.py (slower but compatible without numpy)
#you can also use GUI mode, for faster OpenGL rendering (instead of TinyRender CPU)
# bullet3 examples/pybullet/examples/testrender_np.py (pybullet 3.2.7 wheel: pybullet_examples/),
# zlib licence (LICENSE.bullet3). Altered for sim_node, headless: import; the matplotlib window
# dropped (it showed each image: printed instead as the image's shape, how many pixels see the
# robot and the nearest depth); the endless loop -> one turn, its first STEPS yaws (env
# PYBULLET_EXAMPLE_STEPS); the wall-clock timings are still printed.

import numpy as np
import os
import sim_node.pybullet as pybullet
import time
import pybullet_data

STEPS = int(os.environ.get("PYBULLET_EXAMPLE_STEPS", "6"))

#pybullet.connect(pybullet.GUI)
pybullet.connect(pybullet.DIRECT)

pybullet.setAdditionalSearchPath(pybullet_data.getDataPath())
pybullet.loadURDF("plane.urdf", [0, 0, -1])
pybullet.loadURDF("r2d2.urdf")

camTargetPos = [0, 0, 0]
cameraUp = [0, 0, 1]
cameraPos = [1, 1, 1]
pybullet.setGravity(0, 0, -10)

pitch = -10.0

roll = 0
upAxisIndex = 2
camDistance = 4
pixelWidth = 320
pixelHeight = 200
nearPlane = 0.01
farPlane = 100

fov = 60

main_start = time.time()
for yaw in range(0, 360, 10)[:STEPS]:
    pybullet.stepSimulation()
    start = time.time()

    viewMatrix = pybullet.computeViewMatrixFromYawPitchRoll(camTargetPos, camDistance, yaw, pitch,
                                                            roll, upAxisIndex)
    aspect = pixelWidth / pixelHeight
    projectionMatrix = pybullet.computeProjectionMatrixFOV(fov, aspect, nearPlane, farPlane)
    img_arr = pybullet.getCameraImage(pixelWidth,
                                      pixelHeight,
                                      viewMatrix,
                                      projectionMatrix,
                                      shadow=1,
                                      lightDirection=[1, 1, 1],
                                      renderer=pybullet.ER_BULLET_HARDWARE_OPENGL)
    stop = time.time()
    print("renderImage %f" % (stop - start))

    w = img_arr[0]  #width of the image, in pixels
    h = img_arr[1]  #height of the image, in pixels
    rgb = img_arr[2]  #color data RGB
    dep = img_arr[3]  #depth data

    print('width = %d height = %d' % (w, h))

    #note that sending the data to matplotlib is really slow

    #reshape is needed
    np_img_arr = np.reshape(rgb, (h, w, 4))
    np_img_arr = np_img_arr * (1. / 255.)

    seg = np.reshape(img_arr[4], (h, w))
    print("yaw", yaw, "view", list(viewMatrix))
    print("yaw", yaw, "robot pixels", int(np.sum(seg == 1)), "plane pixels", int(np.sum(seg == 0)),
          "min depth", float(np.min(dep)))

main_stop = time.time()

print("Total time %f" % (main_stop - main_start))

pybullet.resetSimulation()
